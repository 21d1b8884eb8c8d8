"""Uncertainty of the rates a report prints, and paired comparisons between its columns.

- A proportion `k/n` (task damage, stable damage, POST pass rate, probe all-correct rate) gets
  the 95% Wilson score interval (`scipy.stats.binomtest(...).proportion_ci`).
- A mean over instances, sessions or histories (retention, probe field accuracy) gets a 95%
  percentile bootstrap interval over those units: `RESAMPLES` resamples from a generator seeded
  with `SEED`, so the same values always give the same interval. Fewer than two values get none.
- Two columns (summarizers or prompts) saw the same instances, so they are compared paired: on
  POST pass/fail over the instances PRE passed, the discordant counts and the exact McNemar test
  (a two-sided binomial test of one discordant count against the other at 1/2), with Holm's
  step-down correction over all the pairs compared; retention by a paired bootstrap of the
  per-instance differences.
- Power before a sweep: the smallest difference in damage rate an exact McNemar test could
  detect with 80% power at 5%, in the most favourable case (every disagreement one way).

scipy is imported inside the functions that use it, never when this module is imported, so
commands that report nothing do not load it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE
POWER = 0.8
RESAMPLES = 5000
SEED = 0

BOOTSTRAP_NOTE = f"percentile bootstrap over {{units}}, {RESAMPLES:,} resamples, seed {SEED}"


@dataclass(frozen=True)
class Interval:
    """A 95% interval of a rate or a mean, both ends in [0, 1] for rates."""

    low: float
    high: float

    def percent(self) -> str:
        """`[4.7%, 33.3%]`."""
        return f"[{100 * self.low:.1f}%, {100 * self.high:.1f}%]"

    def to_json(self) -> dict[str, float]:
        """`{"low": ..., "high": ...}`."""
        return {"low": self.low, "high": self.high}


def wilson(successes: int, n: int) -> Interval | None:
    """The 95% Wilson score interval of `successes / n`; None when n is 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n}")
    from scipy.stats import binomtest

    found = binomtest(successes, n).proportion_ci(CONFIDENCE, method="wilson")
    return Interval(float(found.low), float(found.high))


def bootstrap_mean(values: Sequence[float], seed: int = SEED) -> Interval | None:
    """The 95% percentile bootstrap interval of the mean of `values` (one value per instance,
    session or history); None for fewer than two values."""
    if len(values) < 2:
        return None
    import numpy as np
    from scipy.stats import bootstrap

    found = bootstrap((np.asarray(values, dtype=float),), np.mean, n_resamples=RESAMPLES,
                      confidence_level=CONFIDENCE, method="percentile",
                      rng=np.random.default_rng(seed)).confidence_interval
    return Interval(float(found.low), float(found.high))


def rate_text(part: int, whole: int) -> str:
    """`3/22 (13.6%, 4.7-33.3%)`: the rate and its 95% Wilson interval; `0/0` when nothing
    was counted."""
    interval = wilson(part, whole)
    if interval is None:
        return f"{part}/0"
    return (f"{part}/{whole} ({100 * part / whole:.1f}%, "
            f"{100 * interval.low:.1f}-{100 * interval.high:.1f}%)")


def mcnemar_exact(first_only: int, second_only: int) -> float:
    """The two-sided exact McNemar p-value of two discordant counts (1.0 when both are 0)."""
    discordant = first_only + second_only
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(min(first_only, second_only), discordant, 0.5).pvalue)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted = [0.0] * len(pvalues)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class PairTest:
    """Two columns compared on the instances both have a PRE-pass result for: `n` instances,
    `first_only` where only the first's POST passed, `second_only` where only the second's did,
    the exact McNemar p-value and its Holm adjustment over every pair compared."""

    first: str
    second: str
    n: int
    first_only: int
    second_only: int
    p: float
    adjusted: float

    @property
    def significant(self) -> bool:
        """Whether the pair differs at 95% once corrected for the number of pairs."""
        return self.adjusted < ALPHA


def paired_tests(columns: Mapping[str, Mapping[str, bool]]) -> list[PairTest]:
    """Every pair of `columns` (name -> instance -> POST passed, over the PRE-pass instances),
    in the order given, with exact McNemar p-values Holm-adjusted over all pairs."""
    found = []
    for first, second in combinations(columns, 2):
        shared = [i for i in columns[first] if i in columns[second]]
        only_first = sum(columns[first][i] and not columns[second][i] for i in shared)
        only_second = sum(columns[second][i] and not columns[first][i] for i in shared)
        found.append((first, second, len(shared), only_first, only_second,
                      mcnemar_exact(only_first, only_second)))
    adjusted = holm([row[-1] for row in found])
    return [PairTest(*row, adjusted=a) for row, a in zip(found, adjusted, strict=True)]


@dataclass(frozen=True)
class MeanDifference:
    """The mean of paired differences `first - second` over `n` units, with its bootstrap
    interval (None for fewer than two units)."""

    first: str
    second: str
    n: int
    mean: float | None
    interval: Interval | None

    @property
    def significant(self) -> bool:
        """Whether the interval leaves out 0."""
        return self.interval is not None and not self.interval.low <= 0 <= self.interval.high


def paired_differences(columns: Mapping[str, Mapping[str, float]]) -> list[MeanDifference]:
    """Every pair of `columns` (name -> unit -> value): the mean paired difference over the
    units both have, with a seeded bootstrap interval."""
    found = []
    for first, second in combinations(columns, 2):
        diffs = [columns[first][u] - columns[second][u] for u in columns[first]
                 if u in columns[second]]
        mean = sum(diffs) / len(diffs) if diffs else None
        found.append(MeanDifference(first, second, len(diffs), mean, bootstrap_mean(diffs)))
    return found


def detectable_difference(n: int, pairs: int = 1) -> int | None:
    """The fewest of `n` instances by which two columns' damage must differ for an exact
    McNemar test at 5% (Holm's first step over `pairs` pairs: 5% / pairs) to find it with 80%
    power, when every disagreement goes one way (the best case: the count of disagreements is
    binomial, and all of them favour one column). None when no difference within `n` could be."""
    from scipy.stats import binom

    alpha = ALPHA / max(1, pairs)
    needed = math.ceil(math.log2(2 / alpha) - 1e-12)  # one-way disagreements for p <= alpha
    if needed > n:
        return None
    for count in range(needed, n + 1):
        if binom.sf(needed - 1, n, count / n) >= POWER:
            return count
    return None


def power_line(n: int, pairs: int) -> str:
    """What `--dry-run` says of the sweep's power for `n` planned instances and `pairs` pairs
    of summarizers."""
    head = f"power: at most {n} PRE-pass instance(s)"
    found = detectable_difference(n)
    if found is None:
        return (f"{head}: too few to tell any two summarizers apart (an exact McNemar test needs "
                f"at least {math.ceil(math.log2(2 / ALPHA))} disagreements, all one way, at 5%)")
    line = (f"{head}: no damage difference under {found} of {n} ({100 * found / n:.0f} points) "
            "can be found with 80% power at 5% (exact McNemar; that floor assumes every "
            "disagreement goes one way, and disagreements both ways need more)")
    if pairs > 1:
        corrected = detectable_difference(n, pairs)
        shown = f"{corrected} of {n}" if corrected is not None else "more than all of them"
        line += f"; {shown} for the first of {pairs} pairs under Holm"
    return line
