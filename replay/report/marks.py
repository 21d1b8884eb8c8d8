"""The codes of the outcome grid, their marks, and the legend lines that say what they mean.

A pair's code is its label's letter (`P` preserved ... `E` error), then its marks: the
confirmation of a damaged pair (`!` stable, `~` seed-variable, `?` confirming), `T` when a cell's
tests timed out, `^` when the seed-0 POST's summary was cut off at the summarizer's output cap
(`finish_reason` length), `#` when a cell of the pair could not run (its first request was
refused: the history, or the summary, longer than the model's context) and `*` when a request
was refused after the agent had run. `T`, `^` and `#` get a legend line only in a run that has
them, so the report of an ordinary run reads as it did before they existed.
"""

from __future__ import annotations

from replay.core.vocab import Label
from replay.records.cell import CellId, CellResult
from replay.records.outcome import Outcome
from replay.sweep.labels import could_not_run, summary_truncated

CODES = {"preserved": "P", "damaged": "D", "rescued": "R", "unsolved": "U", "excluded": "X",
         "unevaluated": "-", "error": "E"}
MARKS = {"stable": "!", "seed-variable": "~", "pending": "?"}
TIMED_OUT_MARK = "T"  # a cell of the pair had its tests time out (see Outcome.timed_out)
TRUNCATED_MARK = "^"  # the seed-0 summary was cut off (see Outcome.truncated)
NOT_RUN_MARK = "#"  # a cell of the pair could not run (see Outcome.not_run)
REFUSED_MARK = "*"  # a request of the pair was refused after the agent ran (Outcome.refused)
LEGEND = ("P preserved  D damaged (! stable, ~ seed-variable, ? confirming)  R rescued  "
          "U unsolved  X excluded  - unevaluated  E error  * a request refused (--cells says "
          "which)")
TIMED_OUT_LEGEND = "T tests timed out (a failing run of the agent's tree)"  # when a cell did
TRUNCATED_LEGEND = ("^ a summary cut off at the summarizer's output cap (finish_reason length; "
                    "the POST continued from what was written)")
NOT_RUN_LEGEND = ("# a cell that could not run: its first request was refused (the history or "
                  "the summary longer than the model's context), counted as refused; a PRE "
                  "that could not run leaves its pairs unevaluated, a POST fails")
SHOWN = 5  # cells named on a legend line; the rest are counted


def code(outcome: Outcome) -> str:
    """The grid code of an outcome (see the module docstring)."""
    mark = MARKS.get(outcome.confirmation or "", "") if outcome.label == Label.DAMAGED else ""
    return (CODES[outcome.label] + mark + (TIMED_OUT_MARK if outcome.timed_out else "")
            + (TRUNCATED_MARK if outcome.truncated else "")
            + (NOT_RUN_MARK if outcome.not_run else "")
            + (REFUSED_MARK if outcome.refused else ""))


def _named(found: list[str]) -> str:
    more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    return ", ".join(found[:SHOWN]) + more


def timed_out_line(cells: dict[CellId, CellResult]) -> str | None:
    """The legend line of the T mark: how many cells had their tests time out, and which
    (None when none did)."""
    found = [f"{cell} after {result.timed_out:g} s" for cell, result in sorted(cells.items())
             if result.timed_out is not None]
    return f"{TIMED_OUT_LEGEND}: {len(found)} cell(s), {_named(found)}" if found else None


def truncated_line(cells: dict[CellId, CellResult]) -> str | None:
    """The legend line of the ^ mark: how many summaries were cut off, and whose (None when
    none was)."""
    found = [str(cell) for cell, result in sorted(cells.items()) if summary_truncated(result)]
    return f"{TRUNCATED_LEGEND}: {len(found)} summary(ies), {_named(found)}" if found else None


def not_run_line(cells: dict[CellId, CellResult]) -> str | None:
    """The legend line of the # mark: how many cells could not run, and which (None when every
    cell that has a result ran)."""
    found = [str(cell) for cell, result in sorted(cells.items()) if could_not_run(result)]
    return f"{NOT_RUN_LEGEND}: {len(found)} cell(s), {_named(found)}" if found else None


def mark_lines(cells: dict[CellId, CellResult]) -> list[str]:
    """The legend lines of the marks the run's cells use (T, ^, #), in that order."""
    return [line for line in (timed_out_line(cells), truncated_line(cells), not_run_line(cells))
            if line is not None]
