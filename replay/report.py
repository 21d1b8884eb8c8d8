"""Reports of a run: outcome grid, damage rates, prompt table, diagnostics; heatmap and exports.

Codes in the grid: P preserved, D damaged (D! stable damage, D~ seed-variable, D? confirmation
not finished), R rescued, U unsolved, X excluded, - unevaluated, E error.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from replay.compaction.summarize import parse_summarizer
from replay.experiments import (
    PRE_PASS,
    CellId,
    CellResult,
    Outcome,
    Plan,
    load_cells,
    outcomes,
    require_run,
    validations,
)
from replay.store import Store

CODES = {"preserved": "P", "damaged": "D", "rescued": "R", "unsolved": "U", "excluded": "X",
         "unevaluated": "-", "error": "E"}
MARKS = {"stable": "!", "seed-variable": "~", "pending": "?"}
STYLES = {"preserved": "green", "damaged": "bold red", "rescued": "cyan", "unsolved": "yellow",
          "excluded": "dim", "unevaluated": "dim", "error": "magenta"}
COLORS = {"preserved": "#4caf50", "damaged": "#e53935", "rescued": "#42a5f5",
          "unsolved": "#fdd835", "excluded": "#bdbdbd", "unevaluated": "#ffffff",
          "error": "#8e24aa"}
DIAGNOSTICS = ("instance", "arm", "summarizer", "seed", "result", "steps", "actions", "exit",
               "repeated_reads", "tests_run", "files_edited", "summary_files", "summary_tokens")


@dataclass
class Rate:
    """Task damage of one summarizer: damaged / PRE-pass, with the confirmation counts."""

    summarizer: str
    pre_pass: int = 0
    damaged: int = 0
    stable: int = 0
    seed_variable: int = 0
    unconfirmed: int = 0

    @property
    def rate(self) -> float | None:
        return self.damaged / self.pre_pass if self.pre_pass else None


@dataclass
class PromptRow:
    """POST passes out of the PRE-pass pairs of every summarizer using one prompt."""

    prompt: str
    summarizers: list[str] = field(default_factory=list)
    pre_pass: int = 0
    post_pass: int = 0


@dataclass
class Report:
    """Everything the report shows, computed from the store."""

    run: str
    plan: Plan
    outcomes: dict[tuple[str, str], Outcome]
    cells: dict[CellId, CellResult]
    rates: list[Rate]
    prompts: list[PromptRow]


def build(store: Store, run: str) -> Report:
    """The report of run `run` as the store holds it now."""
    plan = require_run(store, run)
    cells = load_cells(store, run)
    found = outcomes(plan, cells, validations(store, plan))
    rates = {summarizer: Rate(summarizer) for summarizer in plan.summarizers}
    prompts: dict[str, PromptRow] = {}
    for (_, summarizer), outcome in found.items():
        name = parse_summarizer(summarizer)
        row = prompts.setdefault(name.prompt or name.name, PromptRow(name.prompt or name.name))
        if summarizer not in row.summarizers:
            row.summarizers.append(summarizer)
        if outcome.label not in PRE_PASS:
            continue
        rate = rates[summarizer]
        rate.pre_pass += 1
        row.pre_pass += 1
        row.post_pass += outcome.label == "preserved"
        if outcome.label == "damaged":
            rate.damaged += 1
            rate.stable += outcome.confirmation == "stable"
            rate.seed_variable += outcome.confirmation == "seed-variable"
            rate.unconfirmed += outcome.confirmation in (None, "pending")
    return Report(run, plan, found, cells, list(rates.values()), list(prompts.values()))


def code(outcome: Outcome) -> str:
    """The grid code of an outcome (see the module docstring)."""
    mark = MARKS.get(outcome.confirmation or "", "") if outcome.label == "damaged" else ""
    return CODES[outcome.label] + mark


def _fraction(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else f"{part}/0"


def diagnostics(report: Report) -> list[dict[str, Any]]:
    """One row per cell: what the continuation did and what its summary kept."""
    rows = []
    for cell in sorted(report.cells):
        result = report.cells[cell]
        found = result.diagnostics
        summary = found.get("summary") or {}
        verdict = "error" if result.status == "error" else ("pass" if result.passed else "fail")
        rows.append({
            "instance": cell.instance_id, "arm": cell.arm, "summarizer": cell.summarizer,
            "seed": cell.seed_index, "result": verdict, "steps": found.get("steps"),
            "actions": found.get("actions"), "exit": found.get("exit_reason"),
            "repeated_reads": found.get("repeated_reads"), "tests_run": found.get("tests_run"),
            "files_edited": len(found.get("files_edited") or []),
            "summary_files": "/".join(map(str, summary["target_files"])) if summary else "",
            "summary_tokens": "/".join(map(str, summary["gold_tokens"])) if summary else "",
            "error": result.error or "",
        })
    return rows


def grid_table(report: Report) -> Table:
    """The outcome grid: instances down, summarizers across."""
    table = Table(title=f"outcomes of run {report.run}")
    table.add_column("instance")
    for summarizer in report.plan.summarizers:
        table.add_column(summarizer, justify="center")
    for instance in report.plan.instances:
        cells = []
        for summarizer in report.plan.summarizers:
            outcome = report.outcomes[(instance, summarizer)]
            cells.append(f"[{STYLES[outcome.label]}]{code(outcome)}[/]")
        table.add_row(instance, *cells)
    return table


def render(report: Report, console: Console, cells: bool = False) -> None:
    """Print the grid, the damage rates, the prompt table and (with `cells`) the diagnostics."""
    console.print(grid_table(report))
    console.print("P preserved  D damaged (! stable, ~ seed-variable, ? confirming)  R rescued  "
                  "U unsolved  X excluded  - unevaluated  E error", style="dim")
    rates = Table(title="task damage (damaged / PRE-pass)")
    for column in ("summarizer", "damage", "stable", "seed-variable", "unconfirmed"):
        rates.add_column(column)
    for rate in report.rates:
        rates.add_row(rate.summarizer, _fraction(rate.damaged, rate.pre_pass), str(rate.stable),
                      str(rate.seed_variable), str(rate.unconfirmed))
    console.print(rates)
    prompts = Table(title="prompts (POST passes / PRE-pass)")
    for column in ("prompt", "summarizers", "POST pass"):
        prompts.add_column(column)
    for row in report.prompts:
        prompts.add_row(row.prompt, ", ".join(row.summarizers),
                        _fraction(row.post_pass, row.pre_pass))
    console.print(prompts)
    if cells:
        table = Table(title="diagnostics per cell")
        for column in DIAGNOSTICS:
            table.add_column(column.replace("_", " "))
        for row in diagnostics(report):
            table.add_row(*(str(row[column]) for column in DIAGNOSTICS))
        console.print(table)


def to_json(report: Report) -> dict[str, Any]:
    """The report as one JSON document."""
    return {
        "run": report.run, "plan": json.loads(report.plan.model_dump_json()),
        "outcomes": [{**asdict(outcome), "code": code(outcome)}
                     for outcome in report.outcomes.values()],
        "rates": [{**asdict(rate), "rate": rate.rate} for rate in report.rates],
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
                        "unconfirmed"],
                       [[r.summarizer, _fraction(r.damaged, r.pre_pass), r.stable,
                         r.seed_variable, r.unconfirmed] for r in report.rates])
    lines += ["", "## Prompts", ""]
    lines += _md_table(["prompt", "summarizers", "POST pass / PRE-pass"],
                       [[row.prompt, ", ".join(row.summarizers),
                         _fraction(row.post_pass, row.pre_pass)] for row in report.prompts])
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
