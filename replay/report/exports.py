"""Exports of a report: JSON, CSV, Markdown and the heatmap."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from replay.report.tables import (
    DIAGNOSTICS,
    Report,
    _fraction,
    code,
    diagnostics,
    retention_text,
)
from replay.store import Store

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
    }


def to_markdown(report: Report) -> str:
    """The report as Markdown tables."""
    lines = [f"# Run {report.run}", "",
             f"{report.plan.kind} sweep; agent {report.plan.agent}; carrier "
             f"{report.plan.carrier}; {report.plan.steps} steps.", "", "## Outcomes", ""]
    lines += _md_table(["instance", *report.plan.summarizers],
                       [[instance, *(code(report.outcomes[(instance, s)])
                                     for s in report.plan.summarizers)]
                        for instance in report.plan.instances])
    lines += ["", "P preserved, D damaged (D! stable, D~ seed-variable, D? confirming), "
              "R rescued, U unsolved, X excluded, - unevaluated, E error.", "",
              "## Task damage", ""]
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


def heatmap(report: Report, path: Path) -> Path:
    """Draw the outcome grid as a PNG (matplotlib's Agg canvas, no display needed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    labels = list(COLORS)
    instances, summarizers = report.plan.instances, report.plan.summarizers
    grid = [[labels.index(report.outcomes[(i, s)].label) for s in summarizers] for i in instances]
    figure = Figure(figsize=(2.5 + 1.1 * len(summarizers), 1.6 + 0.45 * len(instances)))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.imshow(grid, cmap=ListedColormap(list(COLORS.values())), vmin=-0.5,
                vmax=len(labels) - 0.5, aspect="auto")
    for row, instance in enumerate(instances):
        for column, summarizer in enumerate(summarizers):
            axes.text(column, row, code(report.outcomes[(instance, summarizer)]),
                      ha="center", va="center", fontsize=9)
    axes.set_xticks(range(len(summarizers)), summarizers, rotation=30, ha="right", fontsize=8)
    axes.set_yticks(range(len(instances)), instances, fontsize=8)
    axes.set_title(f"run {report.run}", fontsize=10)
    used = sorted({cell for row in grid for cell in row})
    axes.legend(handles=[Patch(facecolor=COLORS[labels[i]], edgecolor="black", label=labels[i])
                         for i in used], loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=120)
    return _write_atomic(path, image.getvalue())


def write(report: Report, folder: Path) -> list[Path]:
    """Write JSON, CSV (outcomes and cells), Markdown and the heatmap PNG into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    outcome_rows = [{"instance": o.instance_id, "summarizer": o.summarizer, "label": o.label,
                     "code": code(o), "pre": o.pre, "post": o.post,
                     "confirmation": o.confirmation or "", "cause": o.cause or ""}
                    for o in report.outcomes.values()]
    texts = {"report.json": json.dumps(to_json(report), indent=1),
             "outcomes.csv": _csv(outcome_rows), "cells.csv": _csv(diagnostics(report)),
             "report.md": to_markdown(report)}
    paths = [_write_atomic(folder / name, text.encode()) for name, text in texts.items()]
    paths.append(heatmap(report, folder / "heatmap.png"))
    return paths


def _write_atomic(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    return partial.replace(path)


def reports_folder(store: Store, run: str) -> Path:
    """Where the exports of a run go: `reports/<run>/` beside the store."""
    return store.path.parent / "reports" / run

