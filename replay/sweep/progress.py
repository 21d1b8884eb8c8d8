"""Progress of a sweep: a live rich display on a terminal, one plain line per event elsewhere.

The display shows cells done of all, running and failed, the labels so far, the tokens and cost
of the model calls made so far (calls answered from the cache cost nothing), and the time left;
a line says each time a model call is retried: which model at which endpoint, the attempt and
why it failed.
"""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeRemainingColumn,
)

from replay.judge.validate import Validation
from replay.models.retry import RetryNotice
from replay.sweep.cells import CellTask
from replay.sweep.labels import LABELS
from replay.sweep.plan import CellId, CellResult
from replay.sweep.workers import Task


class SweepProgress:
    """What the driver reports, shown live on a terminal; nothing at all when `quiet`."""

    def __init__(self, console: Console, total: int, quiet: bool = False) -> None:
        self.console = console
        self.total = total
        self.quiet = quiet
        self.done = self.failed = 0
        self.running: set[CellId] = set()
        self.input_tokens = self.output_tokens = 0
        self.cost = 0.0
        self.labels: Counter[str] = Counter()
        self._live: Progress | None = None
        self._task = None

    def __enter__(self) -> SweepProgress:
        if self.console.is_terminal and not self.quiet:
            self._live = Progress(SpinnerColumn(), TextColumn("cells"), BarColumn(),
                                  MofNCompleteColumn(), TimeRemainingColumn(),
                                  TextColumn("{task.fields[status]}"), console=self.console,
                                  transient=False)
            self._live.start()
            self._task = self._live.add_task("cells", total=self.total, status="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()

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
        """A cell finished (or was answered from the store); `labels` are the run's so far."""
        self.running.discard(result.cell)
        self.done += 1
        self.failed += result.status == "error"
        self.labels = labels
        self.input_tokens += int(result.spent.get("input_tokens", 0))
        self.output_tokens += int(result.spent.get("output_tokens", 0))
        self.cost += result.spent.get("cost", 0.0)
        if self._live is not None:
            self._live.advance(self._task)
            self._refresh()
        elif not self.quiet:
            verdict = ("error: " + (result.error or "")) if result.status == "error" else (
                "pass" if result.passed else "fail")
            kept = " (kept)" if result.reused else ""
            self._line(f"[{self.done}/{self.total}] {result.cell}: {verdict}{kept}")

    def status(self) -> str:
        """The counters as one line."""
        labels = ", ".join(f"{name} {self.labels[name]}" for name in LABELS
                           if self.labels.get(name))
        spend = (f"{_tokens(self.input_tokens)} in, {_tokens(self.output_tokens)} out, "
                 f"${self.cost:.4f}")
        return (f"running {len(self.running)}, failed {self.failed} | "
                f"{labels or 'no labels yet'} | {spend}")

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._task, status=self.status())

    def _line(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(text, highlight=False)
        else:
            self.console.print(text, highlight=False, soft_wrap=True)


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)

