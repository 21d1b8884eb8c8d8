"""A graded continuation as the store keeps it."""

from __future__ import annotations

from dataclasses import dataclass

from replay.records.grade import Grade


@dataclass(frozen=True)
class KeptContinuation:
    """A finished, graded continuation: its key, instance, arm, whether its tests passed, its
    grade and the keys of its agent steps' model calls, in order (none for one kept before
    they were recorded). Its trace, tree and tests' log are files of the store."""

    key: str
    instance_id: str
    arm: str
    passed: bool
    grade: Grade
    calls: tuple[str, ...] = ()
