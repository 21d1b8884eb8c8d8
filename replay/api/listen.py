"""What the API says while it works: a `Listener`, and `SILENT`, the one that keeps quiet."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from rich.console import Console

from replay.sweep.execution import Progress
from replay.sweep.progress import SweepProgress


class Listener(Protocol):
    """Where the API says what it is doing: lines for a person, a slow step, a sweep's cells."""

    def note(self, line: str) -> None:
        """One line for a person to read."""

    def busy(self, what: str) -> AbstractContextManager[object]:
        """Held while something slow happens (a download)."""

    def cells(self, todo: int, workers: int) -> AbstractContextManager[Progress]:
        """The progress of a sweep running `todo` cells on `workers` workers."""


class Silent:
    """A listener that keeps everything to itself."""

    def note(self, line: str) -> None:
        """Say nothing."""

    def busy(self, what: str) -> AbstractContextManager[object]:
        """Show nothing."""
        return nullcontext()

    def cells(self, todo: int, workers: int) -> AbstractContextManager[Progress]:
        """Progress that shows nothing."""
        return SweepProgress(Console(quiet=True), todo, quiet=True, workers=workers)


SILENT = Silent()
