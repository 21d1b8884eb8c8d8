"""The progress of a sweep says when a model call is retried, on a terminal and in plain lines."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from replay.histories.records import bundled_history
from replay.models.retry import RetryNotice
from replay.sweep.cells import CellTask
from replay.sweep.plan import CellId
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
