"""The `histories` and `trajectories` tables and their files: Phase A histories cut from a
trajectory, and the trajectories collected or imported.

A history is kept as a row and `histories/ID[:24]/history.json` + `snapshot.diff`; a
trajectory as a row, `trajectories/KEY[:24]/trajectory.json` and one content-addressed diff per
distinct tree, `snapshots/SHA256.diff`. `keep` writes the files first and then every row in one
transaction: a history or trajectory is in the store whole, or not at all. Histories are listed
as `StoredHistory` records and read back as `History`, trajectories as `Trajectory`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import ValidationError

from replay.core.digest import sha256_hex
from replay.core.errors import InputError
from replay.records import grade as grade_record
from replay.records.grade import Grade
from replay.records.history import DIFF_FILE, HISTORY_FILE, History, from_record, history_record
from replay.records.stored import stamped, unstamped
from replay.records.trajectory import Step, Trajectory
from replay.store.artifacts import (
    GRADE,
    HISTORIES,
    TESTS_LOG,
    TRAJECTORIES,
    Spool,
    keyed,
    snapshot_diff,
)
from replay.store.database import Store

TRAJECTORY_FILE = "trajectory.json"
TRAJECTORY_FORMAT = "replay.trajectory"
TRAJECTORY_VERSION = 2  # 2: names its format and version, and keeps `dialect` by its name
OLD_NAMES = {"protocol": "dialect"}  # a key of version 1 -> its field


@dataclass(frozen=True)
class StoredHistory:
    """A stored history as listed: its content id, instance, the trajectory it was cut from
    (and that trajectory's agent model and source), its boundary rule, step and context size,
    and whether its trajectory resolved the instance."""

    id: str
    instance_id: str
    trajectory: str
    model: str
    source: str
    rule: str
    step: int
    tokens: int
    resolved: bool | None


_LISTED = "id, instance_id, trajectory, model, source, rule, step, tokens, resolved"


def keep(store: Store, histories: Sequence[History],
         trajectories: Sequence[Trajectory] = ()) -> set[str]:
    """Store trajectories (replacing those they were) and histories (an existing one stays):
    files first, then every row in one transaction. Returns the ids of the histories that were
    not in the store before."""
    written = [(trajectory, _write_trajectory(store, trajectory)) for trajectory in trajectories]
    fresh = {history.content_id(): history for history in histories
             if not has_history(store, history.content_id())}
    files = [(history, _write_history(store, history)) for history in fresh.values()]
    now = time.time  # each row its own time: histories list oldest first
    with store._transaction() as db:
        db.executemany("INSERT OR REPLACE INTO trajectories VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [(t.key, t.instance_id, t.model, t.source, len(t.steps), t.exit_reason,
                         _flag(t.resolved), len(t.divergences), path, now())
                        for t, path in written])
        db.executemany("INSERT OR IGNORE INTO histories VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [(h.content_id(), h.instance_id, h.trajectory, h.model, h.source,
                         h.boundary.rule, h.boundary.step, h.boundary.tokens, _flag(h.resolved),
                         h.snapshot.fingerprint, path, now()) for h, path in files])
    return set(fresh)


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _write_history(store: Store, history: History) -> str:
    """Write a history's files; return their folder, relative to the artifacts."""
    folder = keyed(HISTORIES, history.content_id())
    store._write_artifact(history.snapshot.diff, *folder, DIFF_FILE)
    record = json.dumps(history_record(history), indent=1, ensure_ascii=False)
    store._write_artifact(record.encode(), *folder, HISTORY_FILE)
    return "/".join(folder)


def _write_trajectory(store: Store, trajectory: Trajectory) -> str:
    """Write a trajectory's files; return their folder, relative to the artifacts."""
    steps = []
    for step in trajectory.steps:
        digest = sha256_hex(step.diff)
        if not store._artifact_path(*snapshot_diff(digest)).is_file():
            store._write_artifact(step.diff, *snapshot_diff(digest))
        steps.append({**asdict(step), "diff": digest})
    data = stamped(TRAJECTORY_FORMAT, TRAJECTORY_VERSION, {**asdict(trajectory), "steps": steps})
    folder = keyed(TRAJECTORIES, trajectory.key)
    store._write_artifact(json.dumps(data, indent=1, ensure_ascii=False).encode(), *folder,
                         TRAJECTORY_FILE)
    return "/".join(folder)


def collection_writer(store: Store, key: str) -> Spool:
    """Where the collection of the trajectory `key` writes as it runs: the agent's trace and
    the final tree's tests' log."""
    return Spool(store._folder(TRAJECTORIES, key))


def keep_grade(store: Store, key: str, grade: Grade) -> None:
    """Keep the grade of the trajectory `key`'s final tree (`grade.json`)."""
    data = stamped(grade_record.FORMAT, grade_record.SCHEMA, grade.to_dict())
    store._write_artifact(json.dumps(data, indent=1).encode(), *keyed(TRAJECTORIES, key), GRADE)


def keep_tests_log(store: Store, key: str, log: bytes) -> None:
    """Keep what the tests of the trajectory `key`'s final tree printed."""
    store._write_artifact(log, *keyed(TRAJECTORIES, key), TESTS_LOG)


def has_history(store: Store, history_id: str) -> bool:
    """Whether the store holds the history with this id."""
    return store._db.execute("SELECT 1 FROM histories WHERE id=?",
                             (history_id,)).fetchone() is not None


def stored_histories(store: Store, instance_id: str | None = None,
                     rule: str | None = None) -> list[StoredHistory]:
    """The stored histories, oldest first, narrowed by instance and rule."""
    query = f"SELECT {_LISTED} FROM histories WHERE 1=1"
    parameters: list[str] = []
    for column, value in (("instance_id", instance_id), ("rule", rule)):
        if value is not None:
            query += f" AND {column}=?"
            parameters.append(value)
    return [StoredHistory(*row[:8], None if row[8] is None else bool(row[8]))
            for row in store._db.execute(query + " ORDER BY created_at, id", parameters)]


def load_history(store: Store, history_id: str) -> History:
    """The stored history with this id; bad input when it is not there or its files are not a
    history."""
    row = store._db.execute("SELECT path FROM histories WHERE id=?", (history_id,)).fetchone()
    if row is None:
        raise InputError(f"no stored history {history_id[:12]} in {store.path}")
    path = store._artifact_path(*row[0].split("/"), HISTORY_FILE)
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return from_record(data, (path.parent / data["snapshot"]["diff"]).read_bytes())
    except (OSError, KeyError, TypeError, json.JSONDecodeError, ValidationError) as exc:
        raise InputError(f"{path}: not a valid history: {exc}".splitlines()[0]) from None


def load_trajectory(store: Store, key: str) -> Trajectory | None:
    """The stored trajectory with this key, or None if there is none (or its files are gone)."""
    row = store._db.execute("SELECT path FROM trajectories WHERE key=?", (key,)).fetchone()
    if row is None:
        return None
    folder = store._artifact_path(*row[0].split("/"))
    try:
        _, data = unstamped(json.loads((folder / TRAJECTORY_FILE).read_text(encoding="utf-8")))
        steps = [Step(**{**step, "diff": store._artifact_path(
            *snapshot_diff(step["diff"])).read_bytes()}) for step in data.pop("steps")]
    except (OSError, json.JSONDecodeError):
        return None
    return Trajectory(**{OLD_NAMES.get(name, name): value for name, value in data.items()},
                      steps=steps)
