"""The verdict on one test run of an instance."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = 2  # 2: names its format and version
FORMAT = "replay.grade"
DEFAULT_TEST_TIMEOUT = 1800.0  # seconds a test run may take unless a run says otherwise


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

    def limit_reached(self) -> float | None:
        """The limit this test run ran into, when it timed out (grades kept before the limit
        was recorded ran under the default)."""
        return (self.timeout or DEFAULT_TEST_TIMEOUT) if self.timed_out else None

    def answers(self, timeout: float) -> bool:
        """Whether this kept grade answers a test run allowed `timeout` seconds: not when it
        timed out under a shorter limit."""
        limit = self.limit_reached()
        return limit is None or limit >= timeout

    def to_dict(self) -> dict[str, Any]:
        """The grade as JSON values (what grade.json holds)."""
        return asdict(self)
