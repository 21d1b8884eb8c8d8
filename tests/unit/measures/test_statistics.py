"""Intervals, paired tests and power against values computed independently: published examples
(Newcombe 1998 for Wilson intervals), closed forms written out here with the standard library,
and a plain resampling loop for the bootstrap."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from statistics import NormalDist

import pytest

from replay.measures.statistics import (
    bootstrap_mean,
    detectable_difference,
    holm,
    mcnemar_exact,
    paired_differences,
    paired_tests,
    power_line,
    rate_text,
    wilson,
)

# Newcombe RG (1998), Two-sided confidence intervals for the single proportion: comparison of
# seven methods, Statistics in Medicine 17:857-872, Table II, method 3 (Wilson score).
NEWCOMBE = [((81, 263), (0.2553, 0.3662)), ((15, 148), (0.0624, 0.1605)),
            ((0, 20), (0.0, 0.1611)), ((1, 29), (0.0061, 0.1718))]


def wilson_closed_form(k: int, n: int) -> tuple[float, float]:
    z = NormalDist().inv_cdf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("counts", "published"), NEWCOMBE)
def test_wilson_intervals_match_newcombe(counts: tuple[int, int],
                                         published: tuple[float, float]) -> None:
    found = wilson(*counts)
    assert found is not None
    assert (round(found.low, 4), round(found.high, 4)) == published


@pytest.mark.parametrize(("k", "n"), [(0, 3), (3, 3), (2, 3), (0, 22), (22, 22), (3, 22),
                                      (16, 22), (19, 22), (1, 1)])
def test_wilson_intervals_match_the_closed_form_at_the_edges(k: int, n: int) -> None:
    found = wilson(k, n)
    assert found is not None
    low, high = wilson_closed_form(k, n)
    assert found.low == pytest.approx(max(0.0, low), abs=1e-9)
    assert found.high == pytest.approx(min(1.0, high), abs=1e-9)
    assert (found.low == 0.0) == (k == 0) and (found.high == 1.0) == (k == n)


def test_rate_text_shows_the_count_the_rate_and_the_interval() -> None:
    assert rate_text(2, 3) == "2/3 (66.7%, 20.8-93.9%)"
    assert rate_text(3, 22) == "3/22 (13.6%, 4.7-33.3%)"  # the "roughly 5% to 33%"
    assert rate_text(0, 0) == "0/0" and wilson(0, 0) is None
    with pytest.raises(ValueError):
        wilson(4, 3)


def mcnemar_by_hand(b: int, c: int) -> float:
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail) if n else 1.0


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 6), (6, 0), (0, 5), (1, 8), (3, 3),
                                      (2, 9), (10, 4), (0, 22), (22, 21)])
def test_exact_mcnemar_is_the_two_sided_binomial_tail(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(mcnemar_by_hand(b, c), rel=1e-12)


def test_exact_mcnemar_known_values() -> None:
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)  # six disagreements, all one way
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)  # five are not enough at 5%
    assert mcnemar_exact(1, 8) == pytest.approx(20 / 512)


def test_holm_step_down() -> None:
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_paired_tests_count_discordant_instances_and_correct_for_the_pairs() -> None:
    strong = {f"i{k}": True for k in range(10)}
    weak = {f"i{k}": k >= 8 for k in range(10)}  # fails where strong passes, 8 times
    same = dict(strong)
    tests = paired_tests({"strong": strong, "weak": weak, "same": same})
    first = tests[0]
    assert (first.first, first.second, first.n, first.first_only, first.second_only) == (
        "strong", "weak", 10, 8, 0)
    assert first.p == pytest.approx(2 / 256)
    assert first.adjusted == pytest.approx(min(1.0, 3 * 2 / 256))
    assert first.significant and tests[2].significant  # weak against strong, and against same
    assert not tests[1].significant and tests[1].p == 1.0  # strong and same never disagree


def test_the_study_prompt_table_cannot_rank_its_prompts() -> None:
    """Kimi Code 19/22 ... opencode 16/22, the most favourable pairing of the passes: even
    then no pair differs once corrected, and Kimi Code vs Codex is far from it."""
    table = {"kimi-code": 19, "claude-code": 18, "gemini-cli": 17, "codex": 16, "opencode": 16}
    columns = {name: {f"i{k}": k < passes for k in range(22)} for name, passes in table.items()}
    tests = paired_tests(columns)
    assert not any(test.significant for test in tests)
    kimi_codex = next(t for t in tests if (t.first, t.second) == ("kimi-code", "codex"))
    assert (kimi_codex.first_only, kimi_codex.second_only) == (3, 0)
    assert kimi_codex.p == pytest.approx(0.25)


def bootstrap_by_hand(values: list[float], resamples: int = 20_000) -> tuple[float, float]:
    rng = random.Random(1)
    means = sorted(sum(rng.choices(values, k=len(values))) / len(values)
                   for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def test_bootstrap_mean_is_seeded_and_agrees_with_a_plain_resampling_loop() -> None:
    values = [0.2, 0.9, 0.55, 0.7, 0.1, 0.65, 0.8, 0.4, 0.3, 0.75, 0.6, 0.5]
    found = bootstrap_mean(values)
    assert found is not None and found == bootstrap_mean(list(values))  # reproducible
    low, high = bootstrap_by_hand(values)
    assert found.low == pytest.approx(low, abs=0.02)
    assert found.high == pytest.approx(high, abs=0.02)
    assert found.low < sum(values) / len(values) < found.high
    assert bootstrap_mean([0.5]) is None and bootstrap_mean([]) is None
    constant = bootstrap_mean([0.4, 0.4, 0.4])
    assert constant is not None and (constant.low, constant.high) == pytest.approx((0.4, 0.4))


def test_paired_differences_use_the_units_both_columns_have() -> None:
    found = paired_differences({"a": {"x": 0.9, "y": 0.8, "z": 0.7, "w": 0.95},
                                "b": {"x": 0.5, "y": 0.4, "z": 0.45}})
    assert len(found) == 1 and found[0].n == 3
    assert found[0].mean == pytest.approx((0.4 + 0.4 + 0.25) / 3)
    assert found[0].significant  # every difference is positive


def binomial_sf(at_least: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(at_least, n + 1))


def test_power_floor_matches_the_binomial_by_hand() -> None:
    # at 5% an exact McNemar test needs 6 disagreements all one way (2/64 < 0.05 < 2/32)
    found = detectable_difference(22)
    assert found == 8
    assert binomial_sf(6, 22, 8 / 22) >= 0.8 > binomial_sf(6, 22, 7 / 22)
    assert detectable_difference(5) is None  # fewer instances than disagreements needed
    assert detectable_difference(6) == 6
    line = power_line(22, 10)
    assert "no damage difference under 8 of 22 (36 points)" in line
    assert "for the first of 10 pairs under Holm" in line
    assert "too few" in power_line(3, 3)


def test_the_command_line_starts_without_scipy() -> None:
    code = ("import sys; from replay.cli import _register_commands; _register_commands(); "
            "sys.exit(int('scipy' in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
