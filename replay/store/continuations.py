"""The `continuations` and `continuation_calls` tables, and the files of each continuation.

A graded continuation is kept with the keys of its agent steps' model calls in one transaction
(`keep`), after its files: its trace (`trace.json`), its tree (`tree.diff`) and its tests' log
(`tests.log`), under `continuations/KEY[:24]/` (`paths`: where the stages write them).
Everything is read back as records: `find`, `trace`, `tests_log`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from replay.records.continuation import KeptContinuation
from replay.records.grade import FORMAT, SCHEMA, Grade
from replay.records.stored import stamped, unstamped
from replay.records.trace import Trace
from replay.store.artifacts import CONTINUATIONS, TESTS_LOG, TRACE, TREE_DIFF, keyed
from replay.store.database import Store


@dataclass(frozen=True)
class Paths:
    """Where the files of a continuation are written as it runs: its trace, the tree it left
    and its tests' log."""

    trace: Path
    tree: Path
    tests_log: Path


def paths(store: Store, key: str) -> Paths:
    """Where the files of the continuation `key` go."""
    folder = store.folder(CONTINUATIONS, key)
    return Paths(folder / TRACE, folder / TREE_DIFF, folder / TESTS_LOG)


def keep(store: Store, kept: KeptContinuation) -> None:
    """Keep a graded continuation (its files are written already) with its steps' call keys,
    in one transaction."""
    with store.transaction() as db:
        db.execute("INSERT OR REPLACE INTO continuations VALUES (?, ?, ?, ?, ?, ?)",
                   (kept.key, kept.instance_id, kept.arm, int(kept.passed),
                    json.dumps(stamped(FORMAT, SCHEMA, kept.grade.to_dict())), time.time()))
        db.execute("DELETE FROM continuation_calls WHERE continuation=?", (kept.key,))
        db.executemany("INSERT INTO continuation_calls VALUES (?, ?, ?)",
                       [(kept.key, step, call) for step, call in enumerate(kept.calls, start=1)])


def find(store: Store, key: str) -> KeptContinuation | None:
    """The graded continuation kept under `key`, if any."""
    row = store.db.execute("SELECT instance_id, arm, passed, grade FROM continuations "
                           "WHERE key=?", (key,)).fetchone()
    if row is None:
        return None
    calls = tuple(found[0] for found in store.db.execute(
        "SELECT call FROM continuation_calls WHERE continuation=? ORDER BY step", (key,)))
    grade = Grade(**unstamped(json.loads(row[3]))[1])
    return KeptContinuation(key, row[0], row[1], bool(row[2]), grade, calls)


def files(store: Store, key: str) -> dict[str, bytes]:
    """The files of the continuation `key`, for another store (`Store.write_artifacts`)."""
    return store.artifact_files(*keyed(CONTINUATIONS, key))


def write_tree(store: Store, key: str, diff: bytes) -> None:
    """Keep the tree the continuation `key` left, as the tests will see it."""
    store.write_artifact(diff, *keyed(CONTINUATIONS, key), TREE_DIFF)


def trace(store: Store, key: str) -> Trace | None:
    """The trace of the continuation `key`, if its file is there and readable."""
    try:
        data = json.loads(paths(store, key).trace.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return Trace.from_dict(data)


def tests_log(store: Store, key: str) -> str | None:
    """What the tests of the continuation `key` printed, if its log is there."""
    path = paths(store, key).tests_log
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
