"""Paired comparisons of a run's columns: which summarizers (or prompts) differ, and by how much.

Every column saw the same instances from the same PRE, so two columns are compared on the
instances PRE passed for both: task damage by the exact McNemar test on POST pass/fail with
Holm's correction over all the pairs, retention by a paired bootstrap of the per-instance
difference of the seed-0 summaries' scores (see `replay.measures.statistics`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay.core.vocab import PRE_PASS, Label
from replay.measures.statistics import (
    BOOTSTRAP_NOTE,
    MeanDifference,
    PairTest,
    paired_differences,
    paired_tests,
)
from replay.report.contents import Report

MCNEMAR_NOTE = ("exact McNemar test on POST pass/fail over the instances PRE passed, "
                "Holm-corrected over {pairs} pair(s)")


@dataclass
class Pairs:
    """The pairs of a run's columns, named by their display names."""

    kind: str  # "prompt" or "summarizer": what the columns are
    damage: list[PairTest]
    retention: list[MeanDifference]


def pairs_of(report: Report, names: dict[str, str]) -> Pairs:
    """The paired comparisons of `report`'s columns, named by `names` (summarizer -> shown)."""
    passes: dict[str, dict[str, bool]] = {}
    shares: dict[str, dict[str, float]] = {}
    for summarizer in report.plan.summarizers:
        shown = names.get(summarizer, summarizer)
        passes[shown] = {instance: report.outcomes[(instance, summarizer)].label == Label.PRESERVED
                         for instance in report.plan.instances
                         if report.outcomes[(instance, summarizer)].label in PRE_PASS}
        shares[shown] = {instance: share for (instance, s, seed), share
                         in report.retention.items()
                         if s == summarizer and seed == 0 and share is not None}
    kind = "prompt" if report.plan.kind == "prompt" else "summarizer"
    retention = paired_differences(shares) if any(shares.values()) else []
    return Pairs(kind, paired_tests(passes), retention)


def _span(counts: list[int]) -> str:
    low, high = min(counts, default=0), max(counts, default=0)
    return f"n={low}" if low == high else f"n={low}-{high}"


def damage_verdict(pairs: Pairs) -> str:
    """One line: which pairs differ in POST pass rate, or plainly that none does."""
    if not pairs.damage:
        return f"pairs: one {pairs.kind} only, nothing to compare"
    how = MCNEMAR_NOTE.format(pairs=len(pairs.damage))
    found = [pair for pair in pairs.damage if pair.significant]
    n = _span([pair.n for pair in pairs.damage])
    if not found:
        best = min(pairs.damage, key=lambda pair: pair.p)
        return (f"no {pairs.kind} differs from another at 95%: {n} ({how}; the closest, "
                f"{best.first} vs {best.second}, p={best.p:.3g}, Holm {best.adjusted:.3g})")
    return f"{len(found)} pair(s) of {pairs.kind}s differ at 95%: {n} ({how})"


def retention_verdict(pairs: Pairs) -> str | None:
    """One line on retention differences; None when retention is not scored."""
    if not pairs.retention:
        return None
    how = BOOTSTRAP_NOTE.format(units="the instances scored for both") + ", not corrected"
    found = [pair for pair in pairs.retention if pair.significant]
    n = _span([pair.n for pair in pairs.retention])
    if not found:
        return f"no {pairs.kind} keeps more details than another at 95%: {n} (paired {how})"
    return f"{len(found)} pair(s) of {pairs.kind}s differ in retention at 95%: {n} (paired {how})"


def damage_rows(pairs: Pairs, everything: bool = False) -> list[dict[str, Any]]:
    """Rows of the damage pairs (only those that differ, unless `everything`)."""
    return [{"first": p.first, "second": p.second, "n": p.n, "first_only_passes": p.first_only,
             "second_only_passes": p.second_only, "p": p.p, "holm_p": p.adjusted,
             "differs": p.significant}
            for p in pairs.damage if everything or p.significant]


def retention_rows(pairs: Pairs, everything: bool = False) -> list[dict[str, Any]]:
    """Rows of the retention pairs (only those that differ, unless `everything`)."""
    return [{"first": p.first, "second": p.second, "n": p.n, "mean_difference": p.mean,
             "low": p.interval.low if p.interval else None,
             "high": p.interval.high if p.interval else None, "differs": p.significant}
            for p in pairs.retention if everything or p.significant]


def render_pairs(pairs: Pairs, console: Console) -> None:
    """The table of the pairs that differ (damage, then retention) and a line for each."""
    rows = damage_rows(pairs)
    if rows:
        table = Table(title=f"{pairs.kind} pairs whose POST pass rates differ")
        for column in (pairs.kind, f"other {pairs.kind}", "n", "only the first passes",
                       "only the other passes", "p", "Holm p"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*(Text(str(value)) for value in (
                row["first"], row["second"], row["n"], row["first_only_passes"],
                row["second_only_passes"], f"{row['p']:.3g}", f"{row['holm_p']:.3g}")))
        console.print(table)
    console.print(Text(damage_verdict(pairs)))
    kept = retention_rows(pairs)
    if kept:
        table = Table(title=f"{pairs.kind} pairs whose retention differs")
        for column in (pairs.kind, f"other {pairs.kind}", "n", "mean difference", "95% interval"):
            table.add_column(column, overflow="fold")
        for row in kept:
            table.add_row(*(Text(str(value)) for value in (
                row["first"], row["second"], row["n"], f"{100 * row['mean_difference']:+.1f}",
                f"{100 * row['low']:+.1f} to {100 * row['high']:+.1f} points")))
        console.print(table)
    line = retention_verdict(pairs)
    if line:
        console.print(Text(line))
