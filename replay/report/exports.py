"""Exports of a report: JSON, CSV, Markdown and the heatmap."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.core.files import write_atomic
from replay.paths import within
from replay.report.histories import HISTORY_COLUMNS, history_rows
from replay.report.spend import run_spend, spend_markdown
from replay.report.tables import (
    DIAGNOSTICS,
    Report,
    _fraction,
    code,
    diagnostics,
    headers,
    retention_text,
    timed_out_line,
)
from replay.store import Store

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLORS = {"preserved": "#4caf50", "damaged": "#e53935", "rescued": "#42a5f5",
          "unsolved": "#fdd835", "excluded": "#bdbdbd", "unevaluated": "#ffffff",
          "error": "#8e24aa"}


def to_json(report: Report) -> dict[str, Any]:
    """The report as one JSON document."""
    return {
        "run": report.run, "plan": json.loads(report.plan.model_dump_json()),
        "outcomes": [{**asdict(outcome), "code": code(outcome)}
                     for outcome in report.outcomes.values()],
        "rates": [{**asdict(rate), "rate": rate.rate} for rate in report.rates],
        "retention": [{"instance": instance, "summarizer": summarizer, "seed": seed,
                       "share": share}
                      for (instance, summarizer, seed), share in report.retention.items()],
        "prompts": [asdict(row) for row in report.prompts],
        "cells": diagnostics(report),
        "spend": run_spend(report.cells).to_json(),
    }


def to_markdown(report: Report) -> str:
    """The report as Markdown tables."""
    lines = [f"# Run {report.run}", "",
             f"{report.plan.kind} sweep; agent {report.plan.agent}; carrier "
             f"{report.plan.carrier}; {report.plan.steps} steps; temperature "
             f"{report.plan.temperature:g}.", "", "## Outcomes", ""]
    lines += _md_table(["instance", *report.plan.summarizers],
                       [[instance, *(code(report.outcomes[(instance, s)])
                                     for s in report.plan.summarizers)]
                        for instance in report.plan.instances])
    lines += ["", "P preserved, D damaged (D! stable, D~ seed-variable, D? confirming), "
              "R rescued, U unsolved, X excluded, - unevaluated, E error."]
    if (line := timed_out_line(report)) is not None:
        lines += ["", line + "."]
    if report.plan.histories:
        lines += ["", "## Histories", ""]
        lines += _md_table(list(HISTORY_COLUMNS), [[row[c] for c in HISTORY_COLUMNS]
                                                   for row in history_rows(report.plan)])
    lines += ["", "## Task damage", ""]
    lines += _md_table(["summarizer", "damaged / PRE-pass", "stable", "seed-variable",
                        "unconfirmed", "retention"],
                       [[r.summarizer, _fraction(r.damaged, r.pre_pass), r.stable,
                         r.seed_variable, r.unconfirmed, retention_text(r.retention)]
                        for r in report.rates])
    lines += ["", "Retention: mean share of the recurring details of the history that the "
              "seed-0 summaries keep (`replay retention`).", "", "## Prompts", ""]
    lines += _md_table(["prompt", "summarizers", "POST pass / PRE-pass", "retention"],
                       [[row.prompt, ", ".join(row.summarizers),
                         _fraction(row.post_pass, row.pre_pass), retention_text(row.retention)]
                        for row in report.prompts])
    lines += ["", "## Cost", "", *spend_markdown(run_spend(report.cells))]
    lines += ["", "## Diagnostics", ""]
    rows = diagnostics(report)
    lines += _md_table(list(DIAGNOSTICS), [[row[c] for c in DIAGNOSTICS] for row in rows])
    return "\n".join(lines) + "\n"


def _md_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|")

    return ["| " + " | ".join(map(cell, header)) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join(map(cell, row)) + " |" for row in rows)]


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
    """Write JSON, CSV (outcomes and cells), Markdown and the heatmap PNG into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    outcome_rows = [{"instance": o.instance_id, "summarizer": o.summarizer, "label": o.label,
                     "code": code(o), "pre": o.pre, "post": o.post,
                     "confirmation": o.confirmation or "", "cause": o.cause or "",
                     "refused": o.refused or "", "timed_out": o.timed_out or ""}
                    for o in report.outcomes.values()]
    texts = {"report.json": json.dumps(to_json(report), indent=1),
             "outcomes.csv": _csv(outcome_rows), "cells.csv": _csv(diagnostics(report)),
             "report.md": to_markdown(report)}
    paths = [write_atomic(folder / name, text.encode()) for name, text in texts.items()]
    paths.append(heatmap(report, folder / "heatmap.png"))
    return paths


def reports_folder(store: Store, run: str) -> Path:
    """Where the exports of a run go: `reports/<run>/` beside the store."""
    return within(store.path.parent / "reports", run)

