"""The progress of a sweep says when a model call is retried, on a terminal and in plain lines,
and shows the calls made with their speed in 80 columns."""

from __future__ import annotations

import io
import re
import threading
from collections import Counter

import pytest
from rich.console import Console

from replay.histories.records import bundled_history
from replay.models.retry import RetryNotice
from replay.pipeline.cell import CellTask
from replay.records.spend import Spend
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
    assert " | 0 calls made (call cache replays not counted) | 0 tokens in" in beats[0]
    assert lines[-1] == ("interrupted: 1 of 3 cell(s) finished and kept in the store; the same "
                         "command resumes the others")


def test_on_an_80_column_terminal_every_line_fits_and_shows_the_calls_made() -> None:
    """Issue 25: the calls made, seconds per call and output tokens per second, as for remote
    models; the one-line status was cut at 80 columns before the spend."""
    out = io.StringIO()
    spent = Spend(23_000, 1_300, 12_000, 0, 0.0123, 0.004, calls=9, call_seconds=31.5)
    with SweepProgress(Console(file=out, force_terminal=True, width=80), 12, workers=2) as progress:
        for seed in range(3):
            progress.finished(CellResult(CellId(TALLY, "pre", "", seed), "done", True,
                                         seconds=42, spent=spent),
                              Counter({"preserved": 2, "damaged": 1}))
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue()).split("\r")[-1]
    lines = shown.rstrip("\n").split("\n")[-4:]
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[0].endswith(" 3/12 left 0:03:09 (a cell takes 0:00:42)")
    assert lines[1:] == ["cells running 0, errors 0 | pairs: preserved 2, damaged 1",
                         "27 calls made, 3.5 s/call, 41.3 tok/s out (call cache replays not "
                         "counted)", "69.0k tokens in (52% cached, saved $0.0120), 3.9k out, "
                         "$0.0369"]
