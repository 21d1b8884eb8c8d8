"""Cells, the units of work of a sweep, and their results."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from replay.core.errors import Fault
from replay.core.vocab import Arm, CellStatus
from replay.records.spend import Spend

SCHEMA = 3  # 2: `fault` (a record) in place of `error` (its line), `spent` with every field;
# 3: names its format and version
FORMAT = "replay.cell"


@dataclass(frozen=True, order=True)
class CellId:
    """One cell: PRE cells have summarizer "" (they do not depend on one)."""

    instance_id: str
    arm: Arm
    summarizer: str
    seed_index: int

    def __str__(self) -> str:
        who = f" {self.summarizer}" if self.summarizer else ""
        return f"{self.instance_id} {self.arm}{who} seed {self.seed_index}"


@dataclass(frozen=True)
class CellResult:
    """A cell's result: `done` with passed True/False, or `error` with its `fault`.

    `spent` counts only model calls made for this cell (not answered from the cache), and
    `estimate` is what the dry run estimated it would cost at most, when it ran;
    `diagnostics` holds what the report shows per continuation. `refused` says which request
    the server refused for its content, and why, when one did: the summarizer's (the POST
    fails: nothing to continue from), or the agent's (its run ended there; at the first step,
    a summary or history the agent cannot read, the cell fails ungraded). `timed_out` is the
    limit, in seconds, that the cell's tests ran into, when they did (the cell fails).
    """

    cell: CellId
    status: CellStatus
    passed: bool | None = None
    continuation: str | None = None
    summary: str | None = None
    reused: bool = False
    diagnostics: dict[str, Any] = field(default_factory=dict)
    spent: Spend = field(default_factory=Spend)
    fault: Fault | None = None
    seconds: float = 0.0
    refused: str | None = None
    timed_out: float | None = None
    estimate: float = 0.0

    def record(self) -> dict[str, Any]:
        """The JSON stored with the cell (its id, status and verdict are columns)."""
        data = asdict(self)
        del data["cell"], data["status"], data["passed"]
        data["fault"] = None if self.fault is None else self.fault.to_json()
        return data

    @classmethod
    def from_record(cls, cell: CellId, status: str, passed: bool | None,
                    record: dict[str, Any]) -> CellResult:
        """The result `record` wrote, or a record of an older store: its `error` line becomes
        a `Fault` (with the traceback its diagnostics kept), its partial `spent` a `Spend`."""
        data = dict(record)
        fault, error = data.pop("fault", None), data.pop("error", None)
        if fault is None and error is not None:
            trace = data.get("diagnostics", {}).pop("traceback", "")
            fault = Fault.from_text(error, trace).to_json()
        data["spent"] = Spend.of(data.get("spent") or {})
        return cls(cell, CellStatus(status), passed,
                   fault=None if fault is None else Fault.from_json(fault), **data)
