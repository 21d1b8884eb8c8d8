"""Two plots of a run beside the heatmap: task damage per summarizer with its 95% Wilson
interval as error bars, and retention against damage (one point per summarizer, the bootstrap
interval of its mean retention across, the Wilson interval of its damage up and down).

Drawn with matplotlib's Agg canvas (no display); PNG bytes for the exports and the web view.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from replay.measures.statistics import wilson
from replay.report.contents import Report, retention_interval

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOT_DPI = 110


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=PLOT_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def damage_figure(report: Report) -> Figure:
    """Task damage per summarizer (damaged / PRE-pass) with 95% Wilson error bars."""
    rates = [rate for rate in report.rates if rate.pre_pass]
    figure = _figure(3 + 0.8 * max(1, len(rates)), 3.6)
    axes = figure.add_subplot()
    for index, rate in enumerate(rates):
        interval = wilson(rate.damaged, rate.pre_pass)
        assert interval is not None and rate.rate is not None
        value = 100 * rate.rate
        axes.errorbar([index], [value], yerr=[[value - 100 * interval.low],
                                              [100 * interval.high - value]],
                      fmt="o", color="#e53935", ecolor="#555555", capsize=5)
        axes.annotate(f"{rate.damaged}/{rate.pre_pass}", (index, value), fontsize=8,
                      xytext=(7, 0), textcoords="offset points", va="center")
    axes.set_xticks(range(len(rates)), [report.shown(rate.summarizer) for rate in rates],
                    rotation=30, ha="right", rotation_mode="anchor", fontsize=8)
    axes.set_xlim(-0.6, max(0.6, len(rates) - 0.4))
    axes.set_ylim(-3, 103)  # a point at 0% or 100% shows whole
    axes.set_ylabel("task damage, % of PRE-pass", fontsize=9)
    axes.set_xlabel("summarizer" + (f" ({report.shared})" if report.shared else ""), fontsize=9)
    axes.set_title(f"task damage of run {report.run} (95% Wilson intervals)", fontsize=10)
    axes.grid(axis="y", alpha=0.3)
    if not rates:
        axes.text(0, 50, "no PRE-pass instance yet", ha="center", fontsize=9)
    return figure


def retention_figure(report: Report) -> Figure | None:
    """Retention against task damage, one point per summarizer with intervals on both axes;
    None until `replay retention` has scored the run."""
    points = []
    for rate in report.rates:
        mean = rate.retention[0] if rate.retention else None
        damage = wilson(rate.damaged, rate.pre_pass)
        if mean is None or damage is None or rate.rate is None:
            continue
        across = retention_interval(report, [rate.summarizer])
        points.append((report.shown(rate.summarizer), 100 * mean, across, 100 * rate.rate,
                       damage))
    if not points:
        return None
    figure = _figure(5.5, 4.2)
    axes = figure.add_subplot()
    for name, x, across, y, damage in points:
        xerr = ([[x - 100 * across.low], [100 * across.high - x]] if across is not None
                else None)
        axes.errorbar([x], [y], xerr=xerr, yerr=[[y - 100 * damage.low], [100 * damage.high - y]],
                      fmt="o", capsize=4, ecolor="#777777")
        axes.annotate(name, (x, y), fontsize=8, xytext=(6, 6), textcoords="offset points")
    axes.set_xlim(-3, 103)
    axes.set_ylim(-3, 103)
    axes.set_xlabel("detail retention, mean % of recurring details kept", fontsize=9)
    axes.set_ylabel("task damage, % of PRE-pass", fontsize=9)
    axes.set_title(f"retention against damage, run {report.run} (95% intervals)", fontsize=10)
    axes.grid(alpha=0.3)
    return figure


def png(figure: Figure) -> bytes:
    """The figure as PNG bytes."""
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=PLOT_DPI)
    return image.getvalue()


def plots(report: Report) -> dict[str, bytes]:
    """The plots of a run as PNG bytes by file name (`retention.png` once retention is scored)."""
    found = {"damage.png": png(damage_figure(report))}
    retention = retention_figure(report)
    if retention is not None:
        found["retention.png"] = png(retention)
    return found
