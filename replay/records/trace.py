"""Everything one continuation did: its messages, actions, usage and how it ended."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from replay.core.errors import Fault
from replay.core.files import write_atomic
from replay.core.vocab import ActionFormat, ExitReason
from replay.records.stored import stamped, unstamped

SCHEMA = 2  # 2: names its format and version; `dialect`, which version 1 kept as `protocol`
FORMAT = "replay.trace"
OLD_NAMES = {"protocol": "dialect"}  # a key of version 1 -> its field


@dataclass(frozen=True)
class Action:
    """One tool call and what it produced."""

    step: int
    tool: str
    arguments: dict[str, Any]
    output: str
    exit_code: int
    seconds: float
    error: bool = False


@dataclass(frozen=True)
class Turn:
    """What one step's actions added to a trace (a dialect's `act`): the observations that
    follow the response, the actions, the files they edited and read, and whether the agent
    submitted."""

    messages: list[dict[str, Any]]
    actions: list[Action] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    finished: bool = False


@dataclass(frozen=True)
class Trace:
    """Everything one continuation did; saved after every step, each step a new record
    (`responded`, `acted`). `dialect` is the action format the agent spoke
    (`replay.agent.dialects`; trace.json of version 1 kept it as `protocol`, which `from_dict`
    reads too). `error` is the line its run ended with; `fault` the fault itself when the
    harness stopped it (not saved: a trace that ended in a fault is never kept)."""

    messages: list[dict[str, Any]]
    start_index: int
    actions: list[Action] = field(default_factory=list)
    steps: int = 0
    exit_reason: ExitReason = ExitReason.RUNNING
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    files_edited: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    dialect: str = ActionFormat.TOOL_CALLS
    fault: Fault | None = field(default=None, compare=False)

    def responded(self, message: dict[str, Any], input_tokens: int, output_tokens: int,
                  cached_tokens: int, cost: float) -> Trace:
        """The trace one step on: the model's response `message`, with its usage and cost."""
        return replace(self, messages=[*self.messages, message], steps=self.steps + 1,
                       input_tokens=self.input_tokens + input_tokens,
                       output_tokens=self.output_tokens + output_tokens,
                       cached_tokens=self.cached_tokens + cached_tokens, cost=self.cost + cost)

    def acted(self, turn: Turn) -> Trace:
        """The trace with what the last response's actions did (`turn`) added; a file edited
        again is listed once."""
        edited = list(self.files_edited)
        for path in turn.edited:
            if path not in edited:
                edited.append(path)
        return replace(self, messages=[*self.messages, *turn.messages],
                       actions=[*self.actions, *turn.actions], files_edited=edited,
                       files_read=[*self.files_read, *turn.read],
                       exit_reason=ExitReason.FINISHED if turn.finished else self.exit_reason)

    def ended(self, exit_reason: ExitReason, error: str | None = None,
              fault: Fault | None = None) -> Trace:
        """The trace ended with `exit_reason` (and the line and fault that ended it)."""
        return replace(self, exit_reason=exit_reason, error=error or self.error,
                       fault=fault or self.fault)

    def to_dict(self) -> dict[str, Any]:
        """The trace as JSON values (what trace.json holds)."""
        data = asdict(self)
        del data["fault"]
        return stamped(FORMAT, SCHEMA, data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        """The trace trace.json holds (written by `to_dict`, or by an older replay)."""
        _, fields = unstamped(data)
        values = {OLD_NAMES.get(name, name): value for name, value in fields.items()}
        values["actions"] = [Action(**action) for action in values.get("actions", [])]
        return cls(**values)

    def save(self, path: Path) -> None:
        """Write the trace atomically (a killed run leaves the previous step's trace)."""
        write_atomic(path, json.dumps(self.to_dict(), indent=1))
