"""A store file's rows as SQLite has them, for tests that check what is on disk or plant the rows
an older replay wrote; replay itself reaches its tables only through `replay.store`'s
repositories. Each call opens its own connection and closes it (a store may be open beside it:
the file is in WAL mode)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any


def rows(path: Path, query: str, *parameters: Any) -> list[tuple[Any, ...]]:
    """What `query` selects from the store file at `path`."""
    with closing(sqlite3.connect(path, timeout=30)) as db:
        return db.execute(query, parameters).fetchall()


def plant(path: Path, statement: str, *parameters: Any) -> None:
    """Write a row (or change one) in the store file at `path`, in one transaction."""
    with closing(sqlite3.connect(path, timeout=30)) as db, db:
        db.execute(statement, parameters)
