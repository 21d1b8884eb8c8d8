"""The verdict on one instance before any model is called (protocol step 2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replay.core.vocab import ValidationStatus

SCHEMA = 2  # 2: its checks name their format and version
FORMAT = "replay.validation-checks"


@dataclass(frozen=True)
class Validation:
    """The verdict on one instance: `valid`, `excluded` with its reasons, or `error` (a fault
    of the harness); `checks` holds what each check found and how long it took."""

    instance_id: str
    status: ValidationStatus
    reasons: list[str] = field(default_factory=list)
    checks: dict[str, Any] = field(default_factory=dict)
