"""The `histories` and `trajectories` tables: Phase A histories cut from a trajectory, and the
trajectories collected or imported, each a row pointing at its files under the artifacts.

Rows are written in one transaction (`keep`), after the files: a history or trajectory is in
the store whole, or not at all.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from typing import Any

from replay.store.database import Store


@dataclass(frozen=True)
class HistoryRow:
    """A stored history: its content id, what it was cut from and by which rule, its size at the
    boundary, whether its trajectory resolved the instance, its snapshot's fingerprint and the
    folder of its files (relative to the artifacts)."""

    id: str
    instance_id: str
    trajectory: str
    model: str
    source: str
    rule: str
    step: int
    tokens: int
    resolved: bool | None
    fingerprint: str
    path: str


@dataclass(frozen=True)
class TrajectoryRow:
    """A stored trajectory: its key, instance, agent model, source, number of steps, how it
    ended, whether it resolved the instance, its divergences and its folder."""

    key: str
    instance_id: str
    model: str
    source: str
    steps: int
    exit_reason: str
    resolved: bool | None
    divergences: int
    path: str


def _values(row: HistoryRow | TrajectoryRow) -> tuple[Any, ...]:
    values = tuple(int(value) if isinstance(value, bool) else value for value in astuple(row))
    return (*values, time.time())  # each row its own time: histories list oldest first


def keep(store: Store, trajectories: Sequence[TrajectoryRow],
         histories: Sequence[HistoryRow]) -> None:
    """Write the rows of trajectories (replacing those they had) and histories (an existing one
    stays) in one transaction: all of them, or none."""
    with store.transaction() as db:
        db.executemany("INSERT OR REPLACE INTO trajectories VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [_values(row) for row in trajectories])
        db.executemany("INSERT OR IGNORE INTO histories VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [_values(row) for row in histories])


def has_history(store: Store, history_id: str) -> bool:
    """Whether the store holds the history with this id."""
    return store.db.execute("SELECT 1 FROM histories WHERE id=?",
                            (history_id,)).fetchone() is not None


def stored_histories(store: Store, instance_id: str | None = None,
                 rule: str | None = None) -> list[dict[str, Any]]:
    """Rows of stored histories (column -> value), oldest first, narrowed by instance and
    rule."""
    query = "SELECT * FROM histories WHERE 1=1"
    parameters: list[str] = []
    for column, value in (("instance_id", instance_id), ("rule", rule)):
        if value is not None:
            query += f" AND {column}=?"
            parameters.append(value)
    cursor = store.db.execute(query + " ORDER BY created_at, id", parameters)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def trajectory_path(store: Store, key: str) -> str | None:
    """The folder (relative to the artifacts) of the trajectory with this key, if stored."""
    row = store.db.execute("SELECT path FROM trajectories WHERE key=?", (key,)).fetchone()
    return None if row is None else row[0]
