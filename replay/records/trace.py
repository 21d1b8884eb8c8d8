"""Everything one continuation did: its messages, actions, usage and how it ended."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from replay.core.files import write_atomic

SCHEMA = 1


@dataclass
class Action:
    """One tool call and what it produced."""

    step: int
    tool: str
    arguments: dict[str, Any]
    output: str
    exit_code: int
    seconds: float
    error: bool = False


@dataclass
class Trace:
    """Everything one continuation did; saved after every step."""

    messages: list[dict[str, Any]]
    start_index: int
    actions: list[Action] = field(default_factory=list)
    steps: int = 0
    exit_reason: str = "running"
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    files_edited: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    protocol: str = "tool-calls"

    def to_dict(self) -> dict[str, Any]:
        """The trace as JSON values (what trace.json holds)."""
        return asdict(self)

    def save(self, path: Path) -> None:
        """Write the trace atomically (a killed run leaves the previous step's trace)."""
        write_atomic(path, json.dumps(self.to_dict(), indent=1))
