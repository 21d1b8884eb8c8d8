"""Reports of a run: outcome grid, damage rates, prompt table, diagnostics.

Beside task damage, each summarizer and prompt shows its recurring-detail retention (the mean of
its seed-0 summaries, kept by `replay retention RUN`; `-` until that has run), so a reader sees
whether keeping details goes with keeping tasks.
"""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay.compaction.summarize import parse_summarizers
from replay.core.vocab import PRE_PASS, Arm, CellStatus, Confirmation, Label
from replay.measures.runs import summarizer_means
from replay.measures.statistics import BOOTSTRAP_NOTE, Interval, rate_text
from replay.records.cell import CellId, CellResult
from replay.report.calls import Call, cell_calls
from replay.report.contents import PromptRow, Rate, Report, retention_interval
from replay.report.costs import COST_COLUMNS, cell_cost, cost_sums, cost_table
from replay.report.histories import histories_table
from replay.report.marks import LEGEND, code, mark_lines
from replay.report.names import display_names, legend_lines
from replay.report.pairs import pairs_of, render_pairs
from replay.report.spend import run_spend, spend_line
from replay.store import Store
from replay.store.runs import load_cells
from replay.store.scores import kept_scores
from replay.sweep.labels import could_not_run, outcomes, summary_truncated, validations
from replay.sweep.plan import require_run

RATE_NOTE = ("k/n (rate, low-high%): the rate and its 95% Wilson score interval; n counts the "
             "instances PRE passed; stable damage shows once `replay confirm` has confirmed "
             "every damaged pair")
RETENTION_NOTE = ("retention: the mean score of the seed-0 summaries (low-high%: its 95% "
                  "interval, " + BOOTSTRAP_NOTE.format(units="the summaries scored")
                  + "; n: summaries scored)")


STYLES = {"preserved": "green", "damaged": "bold red", "rescued": "cyan", "unsolved": "yellow",
          "excluded": "dim", "unevaluated": "dim", "error": "magenta"}


DIAGNOSTICS = ("instance", "arm", "summarizer", "seed", "result", "steps", "actions", "exit",
               "repeated_reads", "tests_run", "files_edited", "summary_files",
               "summary_identifiers", "retention", "refused", "timed_out", *COST_COLUMNS)


def build(store: Store, run: str) -> Report:
    """The report of run `run` as the store holds it now."""
    plan = require_run(store, run)
    cells = load_cells(store, run)
    found = outcomes(plan, cells, validations(store, plan))
    names = parse_summarizers(plan.summarizers)
    rates = {summarizer: Rate(summarizer) for summarizer in plan.summarizers}
    prompts: dict[str, PromptRow] = {}
    for (_, summarizer), outcome in found.items():
        name = names[summarizer]
        row = prompts.setdefault(name.prompt or name.name, PromptRow(name.prompt or name.name))
        if summarizer not in row.summarizers:
            row.summarizers.append(summarizer)
        rate = rates[summarizer]
        rate.refused += outcome.refused is not None or outcome.not_run is not None
        if outcome.label not in PRE_PASS:
            continue
        rate.pre_pass += 1
        row.pre_pass += 1
        row.post_pass += outcome.label == Label.PRESERVED
        if outcome.label == Label.DAMAGED:
            rate.damaged += 1
            rate.stable += outcome.confirmation == Confirmation.STABLE
            rate.seed_variable += outcome.confirmation == Confirmation.SEED_VARIABLE
            rate.unconfirmed += outcome.confirmation in (None, "pending")
    for cell, result in cells.items():
        if cell.arm == Arm.POST and cell.summarizer in rates and summary_truncated(result):
            rates[cell.summarizer].truncated += 1
    scores = kept_scores(store, run)
    by_summarizer = summarizer_means(scores)
    by_prompt = summarizer_means(scores, key=lambda s: (names[s].prompt if s in names else None)
                                 or s)
    for rate in rates.values():
        rate.retention = by_summarizer.get(rate.summarizer)
    for row in prompts.values():
        row.retention = by_prompt.get(row.prompt)
    shown, shared = display_names(names, plan.kind)
    return Report(run, plan, found, cells, list(rates.values()), list(prompts.values()),
                  {(r.instance_id, r.summarizer, r.seed_index): r.share for r in scores},
                  shown, shared,
                  {cell: cell_calls(store, result) for cell, result in cells.items()})


def _fraction(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else f"{part}/0"


def retention_text(found: tuple[Any, ...] | None, interval: Interval | None = None) -> str:
    """A retention mean with its interval, its count and its references' mean size and source:
    `78.4% (61.0-90.2%, n=3, size 41, source suite)`; `-` when not scored."""
    if found is None:
        return "-"
    value, scored, empty = found[:3]
    shown = "-" if value is None else f"{100 * value:.1f}%"
    spread = f"{100 * interval.low:.1f}-{100 * interval.high:.1f}%, " if interval else ""
    reference = f", size {found[3]:.0f}, source {found[4]}" if len(found) > 4 and found[3] else ""
    return (f"{shown} ({spread}n={scored}" + (f", {empty} empty" if empty else "") + reference
            + ")")


def stable_text(rate: Rate) -> str:
    """Stable damage with its interval, once every damaged pair is confirmed (`-` before)."""
    return "-" if rate.unconfirmed else rate_text(rate.stable, rate.pre_pass)


def columns(report: Report) -> tuple[str, ...]:
    """The diagnostics columns of `report`: `truncated` joins them, after the summary's, when a
    summary of the run was cut off."""
    if not report.truncated:
        return DIAGNOSTICS
    at = DIAGNOSTICS.index("summary_identifiers") + 1
    return (*DIAGNOSTICS[:at], "truncated", *DIAGNOSTICS[at:])


def verdict(result: CellResult) -> str:
    """A cell's result: `pass`, `fail`, `error`, or `refused` for a cell that could not run
    (its first request refused; see `replay.sweep.labels.could_not_run`)."""
    if result.status == CellStatus.ERROR:
        return "error"
    if could_not_run(result):
        return "refused"
    return "pass" if result.passed else "fail"


def diagnostics(report: Report) -> list[dict[str, Any]]:
    """One row per cell: what the continuation did and what its summary kept (the keys of
    `columns(report)`, and `error`)."""
    rows, shown = [], (*columns(report), "error")
    for cell in sorted(report.cells):
        result = report.cells[cell]
        found = result.diagnostics
        summary = found.get("summary") or {}
        row = {
            "instance": cell.instance_id, "arm": cell.arm, "summarizer": cell.summarizer,
            "seed": cell.seed_index, "result": verdict(result), "steps": found.get("steps"),
            "actions": found.get("actions"), "exit": found.get("exit_reason"),
            "repeated_reads": found.get("repeated_reads"), "tests_run": found.get("tests_run"),
            "files_edited": len(found.get("files_edited") or []),
            "summary_files": "/".join(map(str, summary["target_files"])) if summary else "",
            "summary_identifiers": "/".join(map(str, summary["gold_tokens"])) if summary else "",
            "truncated": "yes" if summary.get("truncated") else "",
            "retention": _share_text(report.retention, cell),
            "refused": result.refused or "",
            "timed_out": "" if result.timed_out is None else f"{result.timed_out:g} s",
            **cell_cost(result),
            "error": result.fault.text() if result.fault else "",
        }
        rows.append({column: row[column] for column in shown})
    return rows


def _share_text(shares: dict[tuple[str, str, int], float | None], cell: CellId) -> str:
    key = (cell.instance_id, cell.summarizer, cell.seed_index)
    if key not in shares:
        return ""
    share = shares[key]
    return "empty" if share is None else f"{100 * share:.1f}%"


def headers(report: Report) -> tuple[dict[str, str], str]:
    """The column names of the summarizers, and what they share (see `replay.report.names`)."""
    return {s: report.shown(s) for s in report.plan.summarizers}, report.shared


def grid_table(report: Report) -> Table:
    """The outcome grid: instances down, summarizers across, every name whole."""
    heads, shared = headers(report)
    title = f"outcomes of run {report.run}" + (f" (summarizers: {shared})" if shared else "")
    table = Table(title=Text(title))
    width = max((len(instance) for instance in report.plan.instances), default=8)
    table.add_column("instance", no_wrap=True, min_width=width)
    for summarizer in report.plan.summarizers:
        table.add_column(Text(heads[summarizer]), justify="center", overflow="fold")
    for instance in report.plan.instances:
        cells = []
        for summarizer in report.plan.summarizers:
            outcome = report.outcomes[(instance, summarizer)]
            cells.append(Text(code(outcome), style=STYLES[outcome.label]))
        table.add_row(Text(instance), *cells)
    return table


def _texts(*values: object) -> list[Text]:
    return [Text(str(value)) for value in values]


def render(report: Report, console: Console, cells: bool = False) -> None:
    """Print the grid, the histories, the damage rates, the prompt table, the pairs, the cost
    and (with `cells`) the diagnostics."""
    console.print(grid_table(report))
    console.print(Text(LEGEND, style="dim"))
    for line in mark_lines(report.cells):
        console.print(Text(line))
    for line in legend_lines(report.names):
        console.print(Text(line, style="dim"))
    if report.plan.histories:
        console.print(histories_table(report.plan))
    console.print(rates_table(report))
    console.print(prompts_table(report))
    console.print(Text(RATE_NOTE, style="dim"))
    if report.retention:
        console.print(Text(RETENTION_NOTE, style="dim"))
    else:
        console.print(Text(f"retention: `replay retention {report.run}` scores the summaries",
                           style="dim"))
    render_pairs(pairs_of(report, report.names), console)
    sums = cost_sums(report.cells, report.names)
    console.print(cost_table(sums["summarizer"], "summarizer"))
    console.print(cost_table(sums["arm"], "arm"))
    console.print(Text(spend_line(report.run, run_spend(report.cells))))
    if cells:
        console.print(cells_table(report))
        if any(call.key for calls in report.calls.values() for call in calls):
            console.print(calls_table(report))


def rates_table(report: Report) -> Table:
    """Task damage and stable damage per summarizer, with intervals, and retention."""
    table = Table(title="task damage (damaged / PRE-pass) and detail retention")
    for column in rate_columns(report):
        table.add_column(column, overflow="fold")
    for row in rate_rows(report):
        table.add_row(*_texts(*row))
    return table


def rate_columns(report: Report) -> list[str]:
    """The columns of the damage table: `truncated` (summaries cut off) only in a run that has
    one."""
    return ["summarizer", "damage", "stable damage", "seed-variable", "unconfirmed", "refused",
            *(["truncated"] if report.truncated else []), "retention"]


def rate_rows(report: Report) -> list[list[Any]]:
    """The rows of the damage table, one per summarizer, in the order of `rate_columns`."""
    return [[report.shown(rate.summarizer), rate_text(rate.damaged, rate.pre_pass),
             stable_text(rate), rate.seed_variable, rate.unconfirmed, rate.refused,
             *([rate.truncated] if report.truncated else []),
             retention_text(rate.retention, retention_interval(report, [rate.summarizer]))]
            for rate in report.rates]


def prompts_table(report: Report) -> Table:
    """POST passes out of PRE-pass per prompt, with intervals, and retention."""
    table = Table(title="prompts (POST passes / PRE-pass) and detail retention")
    for column in ("prompt", "summarizers", "POST pass", "retention"):
        table.add_column(column, overflow="fold")
    for row in report.prompts:
        table.add_row(*_texts(row.prompt, ", ".join(map(report.shown, row.summarizers)),
                              rate_text(row.post_pass, row.pre_pass),
                              retention_text(row.retention,
                                             retention_interval(report, row.summarizers))))
    return table


def cells_table(report: Report) -> Table:
    """The diagnostics per cell, instance names whole."""
    rows = diagnostics(report)
    table = Table(title="diagnostics per cell")
    width = max((len(row["instance"]) for row in rows), default=8)
    shown_columns = columns(report)
    for column in shown_columns:
        table.add_column(column.replace("_", " "), overflow="fold",
                         **({"no_wrap": True, "min_width": width} if column == "instance" else {}))
    for row in rows:  # which request was refused: the whole reason is in cells.csv
        shown = {**row, "refused": row["refused"].split(" request refused", 1)[0]}
        table.add_row(*_texts(*(shown[column] for column in shown_columns)))
    return table


def calls_table(report: Report) -> Table:
    """Every model call of every cell, in the order each cell made them, with its cost, its
    seconds and the tokens it wrote per second (blank for a call whose time was not kept)."""
    table = Table(title="model calls per cell")
    width = max((len(cell.instance_id) for cell in report.calls), default=8)
    table.add_column("instance", no_wrap=True, min_width=width)
    for column in ("arm", "summarizer", "seed", "call", "model", "tokens in", "cached",
                   "tokens out", "dollars", "seconds", "tok/s out"):
        table.add_column(column, overflow="fold")
    for cell in sorted(report.calls):
        for call in report.calls[cell]:
            shown = ((call.model, call.input_tokens, call.cached_tokens, call.output_tokens,
                      f"{call.cost:.4f}", *_speed(call))
                     if call.found else (call.note, "", "", "", "", "", ""))
            table.add_row(*_texts(cell.instance_id, cell.arm, cell.summarizer,
                                  cell.seed_index, call.what, *shown))
    return table


def _speed(call: Call) -> tuple[str, str]:
    """A call's seconds and output tokens per second, as the calls table prints them."""
    rate = call.output_per_second
    return ("" if call.latency is None else f"{call.latency:.2f}",
            "" if rate is None else f"{rate:.1f}")
