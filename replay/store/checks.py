"""What a file must be for this replay to use it as a store, checked reading only.

A file without tables is a new store; one with only the model call cache's tables is a cache
file of an older replay. Otherwise it must have `meta` (other tables and no `meta`: not a replay
store), a schema version this replay knows how to read (one newer than this replay is refused:
upgrade replay), and every column of every table it has, but those the migrations after its
version add. Anything else is refused in one line (bad input) before anything is written, not
met as an SQLite error halfway through a command.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from replay.core.errors import InputError
from replay.store.migrations import FIRST_VERSION, added_since, table_columns
from replay.store.schema import SCHEMA_VERSION, TABLES, columns

CACHE_TABLES = {"model_calls", "model_refusals"}


def stored_version(db: sqlite3.Connection, path: Path) -> int | None:
    """The schema version of the store in `db` (None: a file without tables, a new store), once
    it is checked (see the module docstring)."""
    tables = [row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    if not tables:
        return None
    if "meta" not in tables and set(tables) <= CACHE_TABLES:
        _check_columns(db, path, FIRST_VERSION)
        return FIRST_VERSION  # a file the model call cache wrote alone, before it was a store's
    if "meta" not in tables:
        raise InputError(f"{path} is not a replay store: an SQLite file with other tables "
                         f"({', '.join(tables[:4])}); give another --store")
    found = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    text = str(FIRST_VERSION) if found is None else str(found[0])
    if text.isdigit() and int(text) > SCHEMA_VERSION:
        raise InputError(f"store {path} has schema version {text}, newer than this "
                         f"replay ({SCHEMA_VERSION}); upgrade replay")
    if not text.isdigit() or int(text) < FIRST_VERSION:
        raise InputError(f"{path} is not a store of this replay: schema version {text}, not "
                         f"{FIRST_VERSION} to {SCHEMA_VERSION}; give another --store")
    version = int(text)
    _check_columns(db, path, version)
    return version


def _check_columns(db: sqlite3.Connection, path: Path, version: int) -> None:
    """Refuse a file whose tables lack columns that no migration after `version` adds."""
    added = added_since(version)
    for table in TABLES:
        found = table_columns(db, table)
        if not found:
            continue
        missing = [name for name in columns(table)
                   if name not in found and name not in added.get(table, {})]
        if missing:
            raise InputError(f"{path} is not a store of this replay: its table {table} has no "
                             f"column {', '.join(missing)} (written by another version or "
                             "program); give another --store")
