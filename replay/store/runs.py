"""The `runs` and `cells` tables: each stored sweep's plan, and the result of each of its cells.

A run's plan and a cell's record are JSON the sweep writes and reads (`replay.sweep.plan`); here
they are only kept, each in one statement.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

from replay.store.database import Store


def plan_json(store: Store, name: str) -> str | None:
    """The JSON of run `name`'s plan, if the store has the run."""
    row = store.db.execute("SELECT plan FROM runs WHERE name=?", (name,)).fetchone()
    return None if row is None else row[0]


def latest_name(store: Store) -> str | None:
    """The name of the run changed last, if there is one."""
    row = store.db.execute("SELECT name FROM runs ORDER BY updated_at DESC LIMIT 1").fetchone()
    return None if row is None else row[0]


def names(store: Store) -> list[str]:
    """The names of every run, sorted."""
    return [row[0] for row in store.db.execute("SELECT name FROM runs ORDER BY name")]


def save(store: Store, name: str, digest: str, plan: str) -> None:
    """Write run `name` with its frame's digest and its plan's JSON, or update them."""
    now = time.time()
    store.db.execute(
        "INSERT INTO runs VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
        "digest=excluded.digest, plan=excluded.plan, updated_at=excluded.updated_at",
        (name, digest, plan, now, now))


@dataclass(frozen=True)
class CellRow:
    """One stored cell: its identity, its status, whether it passed, and its record's JSON."""

    instance_id: str
    arm: str
    summarizer: str
    seed_index: int
    status: str
    passed: bool | None
    record: str


def record_cell(store: Store, run: str, row: CellRow) -> None:
    """Write one cell of run `run` in one statement, replacing the one it had."""
    passed = None if row.passed is None else int(row.passed)
    store.db.execute(
        "INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (run, row.instance_id, row.arm, row.summarizer, row.seed_index, row.status, passed,
         row.record, time.time()))


def cells(store: Store, run: str) -> Iterator[CellRow]:
    """Every stored cell of run `run`."""
    rows = store.db.execute(
        "SELECT instance_id, arm, summarizer, seed_index, status, passed, record FROM cells "
        "WHERE run=?", (run,))
    for instance_id, arm, summarizer, seed, status, passed, record in rows:
        yield CellRow(instance_id, arm, summarizer, seed, status,
                      None if passed is None else bool(passed), record)


def all_cell_records(store: Store) -> list[str]:
    """The record JSON of every cell of every run."""
    return [row[0] for row in store.db.execute("SELECT record FROM cells")]
