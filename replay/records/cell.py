"""Cells, the units of work of a sweep, and their results."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

SCHEMA = 1


@dataclass(frozen=True, order=True)
class CellId:
    """One cell: PRE cells have summarizer "" (they do not depend on one)."""

    instance_id: str
    arm: str
    summarizer: str
    seed_index: int

    def __str__(self) -> str:
        who = f" {self.summarizer}" if self.summarizer else ""
        return f"{self.instance_id} {self.arm}{who} seed {self.seed_index}"


@dataclass
class CellResult:
    """A cell's result: `done` with passed True/False, or `error` with its cause.

    `spent` counts only model calls made for this cell (not answered from the cache), and
    `estimate` is what the dry run estimated it would cost at most, when it ran;
    `diagnostics` holds what the report shows per continuation. `refused` says which request
    the server refused for its content, and why, when one did: the summarizer's (the POST
    fails: nothing to continue from), or the agent's (its run ended there; at the first step,
    a summary or history the agent cannot read, the cell fails ungraded). `timed_out` is the
    limit, in seconds, that the cell's tests ran into, when they did (the cell fails).
    """

    cell: CellId
    status: Literal["done", "error"]
    passed: bool | None = None
    continuation: str | None = None
    summary: str | None = None
    reused: bool = False
    diagnostics: dict[str, Any] = field(default_factory=dict)
    spent: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0
    refused: str | None = None
    timed_out: float | None = None
    estimate: float = 0.0

    def record(self) -> dict[str, Any]:
        """The JSON stored with the cell."""
        data = asdict(self)
        del data["cell"], data["status"], data["passed"]
        return data
