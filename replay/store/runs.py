"""The `runs` and `cells` tables: each stored sweep's plan, and the result of each of its cells.

A run is kept with its `Plan` (and the digest of its frame), a cell with its `CellResult`; both
are read back as those records (`load_run`, `load_cells`), each written in one statement.
"""

from __future__ import annotations

import json
import time

from replay.core.digest import digest
from replay.records import cell as cell_record
from replay.records import plan as plan_record
from replay.records.cell import CellId, CellResult
from replay.records.plan import Plan
from replay.records.stored import stamped, unstamped
from replay.store.database import Store

_CELL = "instance_id, arm, summarizer, seed_index, status, passed, record"


def load_run(store: Store, name: str) -> Plan | None:
    """The plan of run `name`, if the store has the run."""
    row = store._db.execute("SELECT plan FROM runs WHERE name=?", (name,)).fetchone()
    return None if row is None else Plan.model_validate(unstamped(json.loads(row[0]))[1])


def latest_name(store: Store) -> str | None:
    """The name of the run changed last, if there is one."""
    row = store._db.execute("SELECT name FROM runs ORDER BY updated_at DESC LIMIT 1").fetchone()
    return None if row is None else row[0]


def names(store: Store) -> list[str]:
    """The names of every run, sorted."""
    return [row[0] for row in store._db.execute("SELECT name FROM runs ORDER BY name")]


def save_run(store: Store, name: str, plan: Plan) -> None:
    """Write run `name` with its plan (and its frame's digest), or update them."""
    now = time.time()
    store._db.execute(
        "INSERT INTO runs VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
        "digest=excluded.digest, plan=excluded.plan, updated_at=excluded.updated_at",
        (name, digest(plan.frame()),
         json.dumps(stamped(plan_record.FORMAT, plan_record.SCHEMA, plan.model_dump(mode="json"))),
         now, now))


def keep_cell(store: Store, run: str, result: CellResult) -> None:
    """Write one cell's result of run `run` in one statement, replacing the one it had (an
    `error` is replaced when it runs again)."""
    cell = result.cell
    passed = None if result.passed is None else int(result.passed)
    store._db.execute(
        "INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (run, cell.instance_id, cell.arm, cell.summarizer, cell.seed_index, result.status,
         passed, json.dumps(stamped(cell_record.FORMAT, cell_record.SCHEMA, result.record())),
         time.time()))


def _result(row: tuple[str, str, str, int, str, int | None, str]) -> CellResult:
    instance_id, arm, summarizer, seed, status, passed, record = row
    cell = CellId(instance_id, arm, summarizer, seed)  # type: ignore[arg-type]
    return CellResult.from_record(cell, status, None if passed is None else bool(passed),
                                  unstamped(json.loads(record))[1])


def load_cells(store: Store, run: str) -> dict[CellId, CellResult]:
    """Every stored cell of run `run`."""
    rows = store._db.execute(f"SELECT {_CELL} FROM cells WHERE run=?", (run,))
    return {result.cell: result for result in map(_result, rows)}


def all_cells(store: Store) -> list[CellResult]:
    """The result of every cell of every run."""
    return [_result(row) for row in store._db.execute(f"SELECT {_CELL} FROM cells")]
