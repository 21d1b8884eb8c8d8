"""The damage and retention plots draw what the report computes: each point at its rate, its
error bars at the ends of the 95% intervals."""

from __future__ import annotations

import numpy as np
import pytest

from replay.measures.statistics import bootstrap_mean, wilson
from replay.records.plan import Plan
from replay.report.contents import Rate, Report
from replay.report.plots import damage_figure, plots, retention_figure

SUMMARIZERS = ("strong:codex", "weak:codex")
SHARES = {"strong:codex": [0.9, 0.7, 0.8, 0.6, 0.75, 0.85, 0.65, 0.7, 0.8, 0.9],
          "weak:codex": [0.2, 0.4, 0.3, 0.1, 0.35, 0.25, 0.3, 0.2, 0.15, 0.4]}


def report(scored: bool = True) -> Report:
    """Ten PRE-pass instances: strong damages 2, weak 7; retention scored when `scored`."""
    instances = tuple(f"i{k}" for k in range(10))
    plan = Plan(kind="backbone", agent="agent", agent_id="openai:agent@http://127.0.0.1:1/v1",
                instances=instances, summarizers=SUMMARIZERS)
    rates = [Rate(s, pre_pass=10, damaged=d,
                  retention=(float(np.mean(SHARES[s])), 10, 0) if scored else None)
             for s, d in zip(SUMMARIZERS, (2, 7), strict=True)]
    retention = ({(i, s, 0): SHARES[s][k] for s in SUMMARIZERS for k, i in enumerate(instances)}
                 if scored else {})
    return Report("r", plan, {}, {}, rates, [], retention,
                  {"strong:codex": "strong", "weak:codex": "weak"}, "prompt codex")


def bar_ends(container) -> tuple[float, float]:  # noqa: ANN001 (matplotlib's container)
    segment = container.lines[2][0].get_segments()[0]
    return float(segment[0][1]), float(segment[1][1])


def test_damage_points_and_error_bars_are_the_rates_and_wilson_intervals() -> None:
    axes = damage_figure(report()).axes[0]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["strong", "weak"]
    for container, damaged in zip(axes.containers, (2, 7), strict=True):
        interval = wilson(damaged, 10)
        assert interval is not None
        assert container.lines[0].get_ydata()[0] == pytest.approx(10 * damaged)
        assert bar_ends(container) == pytest.approx((100 * interval.low, 100 * interval.high))


def test_retention_against_damage_has_intervals_on_both_axes() -> None:
    figure = retention_figure(report())
    assert figure is not None
    axes = figure.axes[0]
    for container, summarizer, damaged in zip(axes.containers, SUMMARIZERS, (2, 7),
                                              strict=True):
        x, y = container.lines[0].get_xdata()[0], container.lines[0].get_ydata()[0]
        assert (x, y) == pytest.approx((100 * np.mean(SHARES[summarizer]), 10 * damaged))
        across = bootstrap_mean(SHARES[summarizer])
        assert across is not None
        horizontal = [s for c in container.lines[2] for s in c.get_segments()
                      if s[0][1] == s[1][1]][0]
        assert (horizontal[0][0], horizontal[1][0]) == pytest.approx(
            (100 * across.low, 100 * across.high))
    assert retention_figure(report(scored=False)) is None
    assert sorted(plots(report())) == ["damage.png", "retention.png"]
    assert sorted(plots(report(scored=False))) == ["damage.png"]
