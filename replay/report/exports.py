"""Exports of a report: JSON, CSV, Markdown and the heatmap."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.core.files import write_atomic
from replay.core.paths import within
from replay.measures.statistics import wilson
from replay.report.contents import Report, retention_interval
from replay.report.costs import cost_sums
from replay.report.markdown import to_markdown
from replay.report.marks import code
from replay.report.pairs import damage_rows, damage_verdict, pairs_of, retention_rows
from replay.report.plots import plots
from replay.report.spend import run_spend
from replay.report.tables import (
    RETENTION_NOTE,
    _fraction,
    diagnostics,
    headers,
)
from replay.store import Store

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLORS = {"preserved": "#4caf50", "damaged": "#e53935", "rescued": "#42a5f5",
          "unsolved": "#fdd835", "excluded": "#bdbdbd", "unevaluated": "#ffffff",
          "error": "#8e24aa"}


def _interval(found: Any) -> dict[str, float] | None:
    return None if found is None else found.to_json()


def unused(report: Report) -> set[str]:
    """The fields an export of `report` leaves out: an outcome's `not_run` and a rate's and an
    outcome's `truncated` appear only in a run with a cell that could not run, or a summary cut
    off (so the exports of an ordinary run read as before those fields existed)."""
    return {name for name, used in (("not_run", report.not_run),
                                    ("truncated", report.truncated)) if not used}


def _fields(record: Any, left_out: set[str]) -> dict[str, Any]:
    return {name: value for name, value in asdict(record).items() if name not in left_out}


def to_json(report: Report) -> dict[str, Any]:
    """The report as one JSON document: every rate with its 95% interval (`*_interval`, Wilson
    for proportions, bootstrap for retention means), the pairs, the cost sums."""
    pairs = pairs_of(report, report.names)
    left_out = unused(report)
    return {
        "run": report.run, "plan": json.loads(report.plan.model_dump_json()),
        "names": report.names, "shared": report.shared,
        "outcomes": [{**_fields(outcome, left_out), "code": code(outcome)}
                     for outcome in report.outcomes.values()],
        "rates": [{**_fields(rate, left_out), "rate": rate.rate,
                   "rate_interval": _interval(wilson(rate.damaged, rate.pre_pass)),
                   "stable_interval": None if rate.unconfirmed else _interval(
                       wilson(rate.stable, rate.pre_pass)),
                   "retention_interval": _interval(retention_interval(report,
                                                                      [rate.summarizer]))}
                  for rate in report.rates],
        "retention": [{"instance": instance, "summarizer": summarizer, "seed": seed,
                       "share": share}
                      for (instance, summarizer, seed), share in report.retention.items()],
        "prompts": [{**asdict(row), "post_pass_interval": _interval(
                        wilson(row.post_pass, row.pre_pass)),
                     "retention_interval": _interval(retention_interval(report,
                                                                        row.summarizers))}
                    for row in report.prompts],
        "pairs": {"kind": pairs.kind, "verdict": damage_verdict(pairs),
                  "damage": damage_rows(pairs, everything=True),
                  "retention": retention_rows(pairs, everything=True)},
        "intervals": {"proportions": "Wilson score, 95%", "means": RETENTION_NOTE},
        "cells": diagnostics(report),
        "cost": cost_sums(report.cells, report.names),
        "spend": run_spend(report.cells).to_json(),
    }


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()


HEATMAP_DPI = 120


def heatmap_figure(report: Report) -> Figure:
    """The outcome grid as a matplotlib figure: instances down, summarizers across (named as in
    the printed grid), the task damage of each summarizer along the top, axis titles, a legend,
    and every label whole inside the figure (it grows until they fit)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    instances, summarizers = report.plan.instances, report.plan.summarizers
    figure = Figure(figsize=(3 + 0.9 * len(summarizers), 2 + 0.4 * len(instances)),
                    dpi=HEATMAP_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    _draw_grid(figure, report)
    for _ in range(4):  # grow the figure by what its labels overflow, until nothing does
        figure.canvas.draw()
        tight = figure.get_tightbbox(figure.canvas.get_renderer())
        width, height = figure.get_size_inches()
        grow = (max(0.0, tight.x1 - width) + max(0.0, -tight.x0),
                max(0.0, tight.y1 - height) + max(0.0, -tight.y0))
        if grow == (0.0, 0.0):
            break
        figure.set_size_inches(width + grow[0] + 0.2, height + grow[1] + 0.2)
    return figure


def _draw_grid(figure: Figure, report: Report) -> None:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    labels = list(COLORS)
    instances, summarizers = report.plan.instances, report.plan.summarizers
    heads, shared = headers(report)
    rates = {rate.summarizer: rate for rate in report.rates}
    grid = [[labels.index(report.outcomes[(i, s)].label) for s in summarizers] for i in instances]
    axes = figure.add_subplot()
    axes.imshow(grid, cmap=ListedColormap(list(COLORS.values())), vmin=-0.5,
                vmax=len(labels) - 0.5, aspect="auto")
    for row, instance in enumerate(instances):
        for column, summarizer in enumerate(summarizers):
            axes.text(column, row, code(report.outcomes[(instance, summarizer)]),
                      ha="center", va="center", fontsize=9)
    axes.set_xticks(range(len(summarizers)), [heads[s] for s in summarizers], rotation=40,
                    ha="right", rotation_mode="anchor", fontsize=8)
    axes.set_yticks(range(len(instances)), instances, fontsize=8)
    axes.set_xlabel("summarizer" + (f" ({shared})" if shared else ""), fontsize=9)
    axes.set_ylabel("instance", fontsize=9)
    top = axes.secondary_xaxis("top")
    top.set_xticks(range(len(summarizers)),
                   [_fraction(rates[s].damaged, rates[s].pre_pass) for s in summarizers],
                   fontsize=7)
    top.set_xlabel("task damage (damaged / PRE-pass)", fontsize=8)
    axes.set_title(f"outcomes of run {report.run}", fontsize=10)
    used = sorted({cell for row in grid for cell in row})
    figure.legend(handles=[Patch(facecolor=COLORS[labels[i]], edgecolor="black", label=labels[i])
                           for i in used], loc="outside right upper", fontsize=8)


def heatmap(report: Report, path: Path) -> Path:
    """Draw the outcome grid as a PNG (matplotlib's Agg canvas, no display needed)."""
    image = io.BytesIO()
    heatmap_figure(report).savefig(image, format="png", dpi=HEATMAP_DPI)
    return write_atomic(path, image.getvalue())


def write(report: Report, folder: Path) -> list[Path]:
    """Write JSON, CSV (outcomes, cells and pairs), Markdown, the heatmap and the plots (PNG)
    into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    left_out = unused(report)
    outcome_rows = [{name: value for name, value in {
        "instance": o.instance_id, "summarizer": o.summarizer, "label": o.label,
        "code": code(o), "pre": o.pre, "post": o.post, "confirmation": o.confirmation or "",
        "cause": o.cause or "", "refused": o.refused or "", "timed_out": o.timed_out or "",
        "not_run": o.not_run or "", "truncated": o.truncated}.items() if name not in left_out}
        for o in report.outcomes.values()]
    pairs = pairs_of(report, report.names)
    texts = {"report.json": json.dumps(to_json(report), indent=1),
             "outcomes.csv": _csv(outcome_rows), "cells.csv": _csv(diagnostics(report)),
             "pairs.csv": _csv(damage_rows(pairs, everything=True)),
             "report.md": to_markdown(report)}
    paths = [write_atomic(folder / name, text.encode()) for name, text in texts.items()]
    paths.append(heatmap(report, folder / "heatmap.png"))
    paths += [write_atomic(folder / name, data) for name, data in plots(report).items()]
    return paths


def reports_folder(store: Store, run: str) -> Path:
    """Where the exports of a run go: `reports/<run>/` beside the store."""
    return within(store.path.parent / "reports", run)

