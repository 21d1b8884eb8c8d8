"""The `continuations` and `continuation_calls` tables, and the files of each continuation.

A graded continuation is kept with the keys of its agent steps' model calls in one transaction
(`keep`), after its files: its trace (`trace.json`), its tree (`tree.diff`) and its tests' log
(`tests.log`), under `continuations/KEY[:24]/`, which the stages write as they run through the
continuation's `writer`. Everything is read back as records: `find`, `trace`, `tree`,
`tests_log`; a remote worker's continuation travels as its record and its packed `files`, which
the run's store `take`s.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from replay.records.continuation import KeptContinuation
from replay.records.grade import FORMAT, SCHEMA, Grade
from replay.records.stored import stamped, unstamped
from replay.records.trace import Trace
from replay.store.artifacts import CONTINUATIONS, TESTS_LOG, TRACE, TREE_DIFF, Files, Spool, keyed
from replay.store.database import Store


def writer(store: Store, key: str) -> Spool:
    """Where the continuation `key` writes its trace, its tree and its tests' log as it runs."""
    return Spool(store._folder(CONTINUATIONS, key))


def keep(store: Store, kept: KeptContinuation) -> None:
    """Keep a graded continuation (its files are written already) with its steps' call keys,
    in one transaction."""
    with store._transaction() as db:
        db.execute("INSERT OR REPLACE INTO continuations VALUES (?, ?, ?, ?, ?, ?)",
                   (kept.key, kept.instance_id, kept.arm, int(kept.passed),
                    json.dumps(stamped(FORMAT, SCHEMA, kept.grade.to_dict())), time.time()))
        db.execute("DELETE FROM continuation_calls WHERE continuation=?", (kept.key,))
        db.executemany("INSERT INTO continuation_calls VALUES (?, ?, ?)",
                       [(kept.key, step, call) for step, call in enumerate(kept.calls, start=1)])


def find(store: Store, key: str) -> KeptContinuation | None:
    """The graded continuation kept under `key`, if any."""
    row = store._db.execute("SELECT instance_id, arm, passed, grade FROM continuations "
                            "WHERE key=?", (key,)).fetchone()
    if row is None:
        return None
    calls = tuple(found[0] for found in store._db.execute(
        "SELECT call FROM continuation_calls WHERE continuation=? ORDER BY step", (key,)))
    grade = Grade(**unstamped(json.loads(row[3]))[1])
    return KeptContinuation(key, row[0], row[1], bool(row[2]), grade, calls)


def files(store: Store, key: str) -> Files:
    """The files of the continuation `key`, packed for another store (`take`)."""
    return store._pack(*keyed(CONTINUATIONS, key))


def take(store: Store, kept: KeptContinuation, packed: Files) -> None:
    """Keep a continuation another store made, with its files (`files`): its grade's log is then
    the one in this store."""
    store._unpack(packed)
    log = str(store._folder(CONTINUATIONS, kept.key) / TESTS_LOG)
    keep(store, replace(kept, grade=replace(kept.grade, log_path=log)))


def trace(store: Store, key: str) -> Trace | None:
    """The trace of the continuation `key`, if its file is there and readable."""
    try:
        data = json.loads((store._folder(CONTINUATIONS, key) / TRACE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return Trace.from_dict(data)


def trace_file(store: Store, key: str) -> Path:
    """Where the trace of the continuation `key` is, for a person to open (`replay cell`
    prints it); nothing in replay reads or writes it through this."""
    return store._folder(CONTINUATIONS, key) / TRACE


def tree(store: Store, key: str) -> bytes | None:
    """The tree the continuation `key` left (its diff from the base commit), if it is kept."""
    path = store._folder(CONTINUATIONS, key) / TREE_DIFF
    return path.read_bytes() if path.is_file() else None


def tests_log(store: Store, key: str) -> str | None:
    """What the tests of the continuation `key` printed, if its log is there."""
    path = store._folder(CONTINUATIONS, key) / TESTS_LOG
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
