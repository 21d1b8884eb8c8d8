"""Progress of a sweep: a live rich display on a terminal, one plain line per event elsewhere.

The display counts cells (done of all, running, errors, refused), then the labels of the run's
(instance, summarizer) pairs so far, the model calls made so far with their mean seconds and
output tokens per second, their tokens and cost with the share of their prompts the providers
read from their prompt caches and what that saved (replies replayed from the call cache are no
call made: they cost nothing and count nothing), and the time left: the mean duration of the
cells this command ran, times the cells left, over the workers. On a terminal the bar and the
time left take one line and the counters one line each (cells and pairs, calls, spend), each
short enough for 80 columns; elsewhere they make one line. A line says each time a model call
is retried: which model at which endpoint, the attempt and why it failed. Without a terminal,
a line gives the counters at least every `HEARTBEAT` seconds while cells run (a slow model call
is not silence), and a last one when the sweep ends; a sweep interrupted (Ctrl-C, or SIGTERM,
which it takes as Ctrl-C while it runs) says how many cells it finished and kept, so that the
same command resumes. The calls made and the spend count the cells finished so far (a cell
sends what its calls spent when it is done).

Every text that comes from outside (instance names, summarizers, errors) is printed as text,
never read as rich markup.
"""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.text import Text

from replay.core.vocab import CellStatus, Label
from replay.models.retry import RetryNotice
from replay.pipeline.cell import CellTask
from replay.records.cell import CellId, CellResult
from replay.records.spend import Spend
from replay.records.validation import Validation
from replay.sweep.workers import Task

HEARTBEAT = 30.0  # seconds between two lines at most, outside a terminal


class SweepProgress:
    """What the driver reports, shown live on a terminal; nothing at all when `quiet`.

    `workers` is how many cells run at once, for the time left; `heartbeat` the most seconds
    between two lines outside a terminal.
    """

    def __init__(self, console: Console, total: int, quiet: bool = False,
                 workers: int = 1, heartbeat: float = HEARTBEAT) -> None:
        self.console = console
        self.total = total
        self.quiet = quiet
        self.workers = max(1, workers)
        self.done = self.failed = self.refused = 0
        self.running: set[CellId] = set()
        self.durations: list[float] = []  # seconds of the cells this command ran
        self.spend = Spend()
        self.labels: Counter[str] = Counter()
        self._live: Progress | None = None
        self._task = None
        self.heartbeat = heartbeat
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self._started = time.monotonic()
        self._sigterm: Any = None  # the SIGTERM handler this one replaced, to restore

    def __enter__(self) -> SweepProgress:
        if threading.current_thread() is threading.main_thread():
            self._sigterm = signal.signal(signal.SIGTERM, _terminate) or signal.SIG_DFL
        if self.console.is_terminal and not self.quiet:
            self._live = _Display(SpinnerColumn(), TextColumn("cells"), BarColumn(bar_width=20),
                                  MofNCompleteColumn(),
                                  TextColumn("{task.fields[eta]}", markup=False),
                                  console=self.console, transient=False)
            self._live.lines = self.parts()
            self._live.start()
            self._task = self._live.add_task("cells", total=self.total, eta=self.eta_text())
        elif not self.quiet:
            self._beat = threading.Thread(target=self._heartbeat, daemon=True)
            self._beat.start()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self._sigterm is not None:
            signal.signal(signal.SIGTERM, self._sigterm)
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        if self._live is not None:
            self._live.stop()
        elif not self.quiet and self.done:
            self._line(f"[{self.done}/{self.total} cells] {self.status()}")
        if exc_type is KeyboardInterrupt and not self.quiet:
            self._line(f"interrupted: {self.done} of {self.total} cell(s) finished and kept in "
                       "the store; the same command resumes the others")

    def _heartbeat(self) -> None:
        """Outside a terminal: the counters every `HEARTBEAT` seconds while cells run."""
        while not self._stop.wait(self.heartbeat):
            elapsed = _clock(time.monotonic() - self._started)
            running = ", ".join(str(cell) for cell in sorted(self.running, key=str)[:3])
            self._line(f"[{elapsed} elapsed, {self.done}/{self.total} cells, "
                       f"{self.eta_text()}] running {running or 'nothing'} | {self.status()}")

    def planned(self, cells: int) -> None:
        """How many cells will finish (those of valid instances), once validation is done."""
        self.total = cells
        if self._live is not None:
            self._live.update(self._task, total=cells)

    def started(self, task: Task) -> None:
        """A worker took `task`."""
        if isinstance(task, CellTask):
            self.running.add(task.cell)
            self._refresh()

    def retrying(self, task: Task, notice: RetryNotice) -> None:
        """A model call made for `task` failed and is being retried."""
        if not self.quiet:
            what = task.cell if isinstance(task, CellTask) else task.instance.instance_id
            self._line(f"{what}: {notice}")

    def validated(self, validation: Validation) -> None:
        """An instance was validated before its cells."""
        if not self.quiet:
            reasons = f": {'; '.join(validation.reasons)}" if validation.reasons else ""
            self._line(f"validated {validation.instance_id}: {validation.status}{reasons}")

    def finished(self, result: CellResult, labels: Counter[str]) -> None:
        """A cell finished (or was answered from the store); `labels` are the pairs' so far."""
        self.running.discard(result.cell)
        self.done += 1
        self.failed += result.status == CellStatus.ERROR
        self.refused += result.refused is not None
        if not result.reused and result.seconds > 0:
            self.durations.append(result.seconds)
        self.labels = labels
        self.spend.add(result.spent)
        if self._live is not None:
            self._live.advance(self._task)
            self._refresh()
        elif not self.quiet:
            self._line(f"[cell {self.done}/{self.total}] {result.cell}: {verdict(result)}")

    def eta(self) -> float | None:
        """Seconds left, from the mean duration of the cells run so far; None before the
        first."""
        if not self.durations:
            return None
        left = max(0, self.total - self.done)
        mean = sum(self.durations) / len(self.durations)
        return mean * left / max(1, min(self.workers, left))

    def eta_text(self) -> str:
        """The time left as `left 0:03:10 (cells take 0:00:42)`, or what it waits for."""
        left = self.eta()
        if left is None:
            return "time left: after the first cell"
        mean = sum(self.durations) / len(self.durations)
        return f"left {_clock(left)} (a cell takes {_clock(mean)})"

    def parts(self) -> list[str]:
        """The counters in three parts: cells and pairs, the model calls made, their spend."""
        labels = ", ".join(f"{name} {self.labels[name]}" for name in Label
                           if self.labels.get(name))
        refused = f", {self.refused} refused" if self.refused else ""
        return [f"cells running {len(self.running)}, errors {self.failed}{refused} | "
                f"pairs: {labels or 'none labelled yet'}", self.spend.speed_text(),
                self.spend.text()]

    def status(self) -> str:
        """The counters as one line: cells, then pairs, then calls made, then spend."""
        return " | ".join(self.parts())

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.lines = self.parts()
            self._live.update(self._task, eta=self.eta_text())

    def _line(self, text: str) -> None:
        console = self._live.console if self._live is not None else self.console
        console.print(Text(text), soft_wrap=True)


class _Display(Progress):
    """rich's progress bar with a line of text under it for each of `lines`."""

    lines: Sequence[str] = ()

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        yield from (Text(line) for line in self.lines)


def verdict(result: CellResult) -> str:
    """A cell's result in a few words: pass, fail, refused (which request), tests timed out,
    or the error."""
    if result.status == CellStatus.ERROR:
        return f"error: {result.fault.text() if result.fault else ''}"
    word = "pass" if result.passed else "fail"
    refused = f" ({result.refused})" if result.refused else ""
    timed = (f" (tests timed out after {result.timed_out:g} s)"
             if result.timed_out is not None else "")
    return word + refused + timed + (" (kept)" if result.reused else "")


def _terminate(number: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops a sweep as Ctrl-C does (exit 130)


def _clock(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds)))
