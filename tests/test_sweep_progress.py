"""The progress of a sweep says when a model call is retried, on a terminal and in plain lines."""

from __future__ import annotations

import io
import threading
from collections import Counter

import pytest
from rich.console import Console

from replay.histories.records import bundled_history
from replay.models.retry import RetryNotice
from replay.pipeline.cell import CellTask
from replay.sweep.plan import CellId, CellResult
from replay.sweep.progress import SweepProgress

from sweep_scripts import DEMO, TALLY

NOTICE = RetryNotice("agent", "http://127.0.0.1:9/v1", 2, 6, "HTTP 429", 1.5)
LINE = (f"{TALLY} pre seed 0: model 'agent' at http://127.0.0.1:9/v1: attempt 2 of 6 failed "
        "(HTTP 429), retrying in 1.5s")


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "plain"])
def test_a_retried_call_is_one_line(terminal: bool) -> None:
    task = CellTask(CellId(TALLY, "pre", "", 0), DEMO[TALLY], bundled_history(DEMO[TALLY]))
    out = io.StringIO()
    with SweepProgress(Console(file=out, force_terminal=terminal, width=200), 1) as progress:
        progress.started(task)
        progress.retrying(task, NOTICE)
    assert LINE in out.getvalue()
    assert progress.console.is_terminal == terminal


def test_a_quiet_progress_prints_no_retry() -> None:
    task = CellTask(CellId(TALLY, "pre", "", 0), DEMO[TALLY], bundled_history(DEMO[TALLY]))
    out = io.StringIO()
    with SweepProgress(Console(file=out), 1, quiet=True) as progress:
        progress.retrying(task, NOTICE)
    assert out.getvalue() == ""


def test_the_time_left_comes_from_measured_cell_durations() -> None:
    out = io.StringIO()
    progress = SweepProgress(Console(file=out, width=200), 10, workers=2)
    assert progress.eta() is None and progress.eta_text() == "time left: after the first cell"
    results = [CellResult(CellId("[/x]", "pre", "", 0), "done", True, seconds=30),
               CellResult(CellId("[/x]", "post", "m:codex", 0), "done", False, seconds=90,
                          refused="agent request refused: [bold]too long"),
               CellResult(CellId("other", "pre", "", 0), "done", True, reused=True)]
    for result in results:
        progress.finished(result, Counter({"damaged": 1, "unevaluated": 3}))
    assert progress.eta() == 60 * 7 / 2  # a mean of 60 s, 7 cells left, 2 at once
    assert progress.eta_text() == "left 0:03:30 (a cell takes 0:01:00)"
    assert progress.status().startswith("cells running 0, errors 0, 1 refused | pairs: damaged 1, "
                                        "unevaluated 3 | ")
    lines = out.getvalue().splitlines()
    assert lines[1] == ("[cell 2/10] [/x] post m:codex seed 0: fail (agent request refused: "
                        "[bold]too long)")
    assert lines[2].endswith("other pre seed 0: pass (kept)")


def test_outside_a_terminal_a_line_comes_while_a_cell_runs_and_an_interrupt_is_told() -> None:
    """Issue 25: a 9-minute model call printed nothing outside a terminal; an interrupted run
    exited 130 without a word about what it kept."""
    task = CellTask(CellId(TALLY, "pre", "", 0), DEMO[TALLY], bundled_history(DEMO[TALLY]))
    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt), \
            SweepProgress(Console(file=out, width=300), 3, heartbeat=0.05) as progress:
        progress.started(task)
        for _ in range(200):  # until two beats are out (a busy machine may be slow)
            if out.getvalue().count("elapsed") >= 2:
                break
            threading.Event().wait(0.05)
        progress.finished(CellResult(task.cell, "done", True, seconds=4), Counter())
        raise KeyboardInterrupt
    lines = out.getvalue().splitlines()
    beats = [line for line in lines if "elapsed, 0/3 cells" in line]
    assert len(beats) >= 2 and f"running {TALLY} pre seed 0 |" in beats[0]
    assert lines[-1] == ("interrupted: 1 of 3 cell(s) finished and kept in the store; the same "
                         "command resumes the others")
