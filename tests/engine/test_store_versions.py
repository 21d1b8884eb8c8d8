"""Schema versions: a store older than this replay is read as upgraded without being written and
is upgraded when opened to write; one newer than this replay, or a corrupt one, is refused in one
line (exit 2) by every command, unchanged."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from store_rows import rows

from replay.core.errors import InputError
from replay.models.cache import CallCache
from replay.records.plan import Plan
from replay.store import Store, runs
from replay.store.calls import CallUsage, kept_calls, seconds_total
from replay.store.migrations import MIGRATIONS
from replay.store.runs import save_run
from replay.store.schema import SCHEMA_VERSION, TABLES

from conftest import one_line_exit_2, replay_here
from sweep_scripts import TALLY

GONE = "openai:a@http://127.0.0.1:9/v1"
COMMANDS = [["report"], ["view"], ["validate", "--instance", TALLY],
            ["backbone", "--agent-model", GONE, "--model", GONE, "--instance", TALLY]]
# model_calls as the first call cache made it, before `seconds` and `cache_write_tokens`
FIRST_CALLS = ("CREATE TABLE model_calls (key TEXT PRIMARY KEY, alias TEXT NOT NULL, provider "
               "TEXT NOT NULL, model TEXT NOT NULL, seed_index INTEGER NOT NULL, request_json "
               "TEXT NOT NULL, response_json TEXT NOT NULL, input_tokens INTEGER NOT NULL, "
               "output_tokens INTEGER NOT NULL, cached_tokens INTEGER NOT NULL, cost REAL NOT "
               "NULL, created_at TEXT NOT NULL)")


def a_store(path: Path) -> Path:
    """A store of this replay holding one run."""
    with Store.open(path) as opened:
        save_run(opened, "taken", Plan(kind="backbone", agent=GONE, agent_id="other",
                                       instances=(TALLY,), summarizers=("anchor_index",)))
    return path


def an_old_store(path: Path) -> Path:
    """A store as replay wrote it before versions were raised: schema version 1, the call cache's
    first table with one call, and no other table but `meta`."""
    with sqlite3.connect(path) as db:
        db.execute(TABLES["meta"])
        db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        db.execute(FIRST_CALLS)
        db.execute("INSERT INTO model_calls VALUES ('old', 'a', 'openai', 'm', 0, '{}', '{}', 5, "
                   "7, 0, 0.5, '2026-01-01T00:00:00+00:00')")
    db.close()
    return path


def test_an_older_store_reads_as_upgraded_and_is_upgraded_when_written(tmp_path: Path) -> None:
    store = an_old_store(tmp_path / "replay.db")
    before = store.read_bytes()
    old = CallUsage("old", "m", 5, 0, 7, 0.5, "2026-01-01T00:00:00+00:00", None)
    for opened in (Store.open_read_only(store), Store.peek(store)):
        with opened:  # the columns and tables it lacks are read as empty
            assert kept_calls(opened, ["old"]) == {"old": old}
            assert seconds_total(opened) == (0.0, 1) and runs.names(opened) == []
    assert store.read_bytes() == before
    with Store.open(store) as opened:
        assert kept_calls(opened, ["old"]) == {"old": old}
    query = "SELECT key, input_tokens, seconds, cache_write_tokens FROM model_calls"
    assert rows(store, query) == [("old", 5, None, 0)]
    version = rows(store, "SELECT value FROM meta")
    tables = {row[0] for row in rows(store, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert version == [(str(SCHEMA_VERSION),)] and tables == set(TABLES)
    assert [step.version for step in MIGRATIONS] == list(range(2, SCHEMA_VERSION + 1))


def newer(path: Path) -> Path:
    """A store written by a replay one schema version newer than this one."""
    a_store(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value=? WHERE key='schema_version'",
                   (str(SCHEMA_VERSION + 1),))
    db.close()
    return path


def garbled(path: Path) -> Path:
    """A store whose pages after the first were overwritten."""
    a_store(path)
    data = bytearray(path.read_bytes())
    data[100:] = b"\xa5" * (len(data) - 100)
    path.write_bytes(bytes(data))
    return path


def not_sqlite(path: Path) -> Path:
    """A file that was never an SQLite database."""
    path.write_bytes(b"this is not a database" * 100)
    return path


CASES = [(newer, f"has schema version {SCHEMA_VERSION + 1}, newer than this replay "
                 f"({SCHEMA_VERSION}); upgrade replay"),
         (garbled, "database disk image is malformed"),
         (not_sqlite, "file is not a database")]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command[0])
@pytest.mark.parametrize("make, message", CASES, ids=lambda value: getattr(value, "__name__",
                                                                           None))
def test_a_newer_or_corrupt_store_is_refused_in_one_line_unchanged(
        make, message: str, command: list[str], tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    store = make(tmp_path / "runs" / "replay.db")
    before = store.read_bytes()
    done = replay_here(*command, "--store", str(store))
    one_line_exit_2(done, "")
    assert message in done.stderr, done.stderr
    assert store.read_bytes() == before



def _open_after(path: str, barrier: Any) -> str:
    """Open the store at `path` (and its call cache) once every process is ready; the error, or
    an empty string."""
    barrier.wait()
    try:
        Store.open(Path(path)).close()
        CallCache(Path(path)).close()
    except InputError as exc:
        return str(exc)
    return ""


def test_processes_opening_one_new_store_at_once_all_get_it(tmp_path: Path) -> None:
    """Two Ray actors on one node open its scratch store together: four processes released at
    once on a new store, thirty times, all open it (without the folder lock about one round in
    ten answered "database is locked")."""
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager, context.Pool(4) as pool:
        for round_ in range(30):
            barrier = manager.Barrier(4)
            path = str(tmp_path / str(round_) / "node" / "replay.db")
            errors = [e for e in pool.starmap(_open_after, [(path, barrier)] * 4) if e]
            assert errors == [], f"round {round_}"
            assert rows(Path(path), "SELECT value FROM meta WHERE key='schema_version'") == [
                (str(SCHEMA_VERSION),)]
