"""The verdict on one test run of an instance."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = 2  # 2: names its format and version
FORMAT = "replay.grade"


@dataclass(frozen=True)
class Grade:
    """The verdict on one test run; `timeout` is the limit it ran under (None in grades kept
    before it was recorded), `timed_out` says it ran into it."""

    resolved: bool
    status: str
    tests_ran: bool
    statuses: dict[str, str] = field(default_factory=dict)
    fail_to_pass: dict[str, list[str]] = field(default_factory=dict)
    pass_to_pass: dict[str, list[str]] = field(default_factory=dict)
    log_path: str | None = None
    duration: float = 0.0
    timed_out: bool = False
    timeout: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The grade as JSON values (what grade.json holds)."""
        return asdict(self)
