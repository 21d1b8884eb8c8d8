"""The outcome of checking one dataset row's recipe (`replay recipes check`)."""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA = 2  # 2: names its format and version (`replay.records.stored`)
FORMAT = "replay.recipe-check"


@dataclass(frozen=True)
class RowCheck:
    """The outcome of checking one row's recipe: valid, excluded, error or refused, why, how
    long it took and the digest of the recipe it checked."""

    instance_id: str
    repo: str
    version: str
    status: str  # valid, excluded, error, refused
    reason: str = ""
    seconds: float = 0.0
    digest: str = ""
