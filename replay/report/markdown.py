"""A report as Markdown: the tables of `replay report`, their intervals and what each counts."""

from __future__ import annotations

from typing import Any

from replay.measures.statistics import rate_text
from replay.report.contents import Report, retention_interval
from replay.report.costs import cost_sums
from replay.report.histories import HISTORY_COLUMNS, history_rows
from replay.report.marks import LEGEND, code, mark_lines
from replay.report.names import legend_lines
from replay.report.pairs import damage_rows, damage_verdict, pairs_of, retention_verdict
from replay.report.spend import run_spend, spend_markdown
from replay.report.tables import (
    RATE_NOTE,
    RETENTION_NOTE,
    columns,
    diagnostics,
    rate_columns,
    rate_rows,
    retention_text,
)


def to_markdown(report: Report) -> str:
    """The report as Markdown tables."""
    plan = report.plan
    lines = [f"# Run {report.run}", "",
             f"{plan.kind} sweep; agent {plan.agent}; carrier {plan.carrier}; {plan.steps} "
             f"steps; temperature {plan.temperature:g}.", "", "## Outcomes", ""]
    if report.shared:
        lines += [f"Summarizers: {report.shared}.", ""]
    lines += md_table(["instance", *map(report.shown, plan.summarizers)],
                      [[instance, *(code(report.outcomes[(instance, s)])
                                    for s in plan.summarizers)]
                       for instance in plan.instances])
    lines += ["", LEGEND.replace("  ", "; ") + ".", *(f"- {line}" for line in
                                                      legend_lines(report.names))]
    for line in mark_lines(report.cells):
        lines += ["", line + "."]
    if plan.histories:
        lines += ["", "## Histories", ""]
        lines += md_table(list(HISTORY_COLUMNS), [[row[c] for c in HISTORY_COLUMNS]
                                                  for row in history_rows(plan)])
    lines += ["", "## Task damage", "", *_rates(report), "", "## Prompts", "",
              *_prompts(report), "", "## Pairs", "", *_pairs(report), "", "## Cost", "",
              *spend_markdown(run_spend(report.cells))]
    for group, rows in cost_sums(report.cells, report.names).items():
        lines += ["", f"By {group}:", ""]
        lines += md_table(list(rows[0]) if rows else [group], [list(r.values()) for r in rows])
    lines += ["", "## Diagnostics", ""]
    shown = columns(report)
    lines += md_table(list(shown), [[row[c] for c in shown] for row in diagnostics(report)])
    return "\n".join(lines) + "\n"


def _rates(report: Report) -> list[str]:
    header = ["damaged / PRE-pass" if column == "damage" else column
              for column in rate_columns(report)]
    return [*md_table(header, rate_rows(report)), "", RATE_NOTE + ".",
            *(["", RETENTION_NOTE + "."] if report.retention else [])]


def _prompts(report: Report) -> list[str]:
    rows = [[row.prompt, ", ".join(map(report.shown, row.summarizers)),
             rate_text(row.post_pass, row.pre_pass),
             retention_text(row.retention, retention_interval(report, row.summarizers))]
            for row in report.prompts]
    return [*md_table(["prompt", "summarizers", "POST pass / PRE-pass", "retention"], rows), "",
            RATE_NOTE + "."]


def _pairs(report: Report) -> list[str]:
    pairs = pairs_of(report, report.names)
    rows = damage_rows(pairs)
    lines = md_table(list(rows[0]), [list(r.values()) for r in rows]) + [""] if rows else []
    lines.append(damage_verdict(pairs) + ".")
    retention = retention_verdict(pairs)
    return lines + (["", retention + "."] if retention else [])


def md_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table, `|` escaped in every cell."""
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|")

    return ["| " + " | ".join(map(cell, header)) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join(map(cell, row)) + " |" for row in rows)]
