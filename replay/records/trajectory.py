"""Recorded trajectories: every message of a Phase A run and the working tree after every step.

Any step can become a boundary: a history is the messages up to the end of step k and the
snapshot taken after step k (`Trajectory.history_at`); where the boundary rules put k is
`replay.histories.boundaries`'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replay.records.history import Boundary, History
from replay.records.snapshot import Snapshot


@dataclass(frozen=True)
class Step:
    """One step: where its messages end, the context after it, and the tree after it."""

    end: int
    context_tokens: int
    tokens_estimated: bool
    fingerprint: str
    diff: bytes = field(repr=False)
    edited: list[str] = field(default_factory=list)
    divergences: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Trajectory:
    """A complete Phase A run of one instance, from the task to its last step."""

    key: str
    instance_id: str
    base_commit: str
    model: str
    source: str
    messages: list[dict[str, Any]]
    opening_tokens: int
    steps: list[Step]
    exit_reason: str
    resolved: bool | None
    dialect: str = "tool-calls"

    @property
    def divergences(self) -> list[str]:
        """Every recorded output that differed from execution (imports only), step by step."""
        return [text for step in self.steps for text in step.divergences]

    def history_at(self, count: int, rule: str) -> History:
        """The history that ends after step `count` (1-based), cut by `rule`."""
        step = self.steps[count - 1]
        snapshot = Snapshot(base_commit=self.base_commit, diff=step.diff,
                            fingerprint=step.fingerprint)
        boundary = Boundary(rule=rule, step=count, tokens=step.context_tokens,
                            tokens_estimated=step.tokens_estimated, steps_total=len(self.steps))
        return History(instance_id=self.instance_id, messages=self.messages[:step.end],
                       boundary=boundary, model=self.model, source=self.source,
                       snapshot=snapshot, resolved=self.resolved, trajectory=self.key,
                       divergences=[text for s in self.steps[:count] for text in s.divergences],
                       dialect=self.dialect)
