"""Results in one SQLite file, artifacts (logs, snapshots, traces) as files beside it.

Every record is written in one transaction and every artifact through a temporary file and a
rename, so a process killed at any moment leaves no half record.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from replay.core.files import write_atomic
from replay.errors import InputError
from replay.paths import within

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS validations (
    instance_id TEXT NOT NULL,
    backend TEXT NOT NULL,
    status TEXT NOT NULL,
    reasons TEXT NOT NULL,
    checks TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (instance_id, backend)
);
CREATE TABLE IF NOT EXISTS continuations (
    key TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL,
    arm TEXT NOT NULL,
    passed INTEGER NOT NULL,
    grade TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""


_CREATE_TABLE = re.compile(r"\s*CREATE TABLE IF NOT EXISTS (\w+)", re.IGNORECASE)


class ReadOnlyConnection(sqlite3.Connection):
    """A connection to a file opened read-only, on which the readers' `CREATE TABLE IF NOT
    EXISTS` scripts write nothing: a table the file lacks is made empty in temporary memory,
    one the file has is left as it is; any other statement of a script is refused."""

    def executescript(self, script: str) -> sqlite3.Cursor:  # type: ignore[override]
        for statement in filter(str.strip, script.split(";")):
            match = _CREATE_TABLE.match(statement)
            if match is None:
                raise sqlite3.OperationalError(f"read-only store: {statement.strip()[:40]}")
            if not self.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                                (match.group(1),)).fetchone():
                self.execute(statement.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
        return self.cursor()


class Store:
    """The results database and its artifact folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.artifacts = path.parent / "artifacts"
        self._connection: sqlite3.Connection | None = None

    @classmethod
    def open(cls, path: Path) -> Store:
        """Open (creating if needed) the store at `path`; one clear error if it cannot be used."""
        store = cls(path)
        store._connect()
        return store

    @classmethod
    def open_read_only(cls, path: Path) -> Store:
        """Open an existing store for reading only: nothing is ever written to it (see
        `ReadOnlyConnection`); one clear error if it is not a store."""
        store = cls(path)
        try:
            connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                         timeout=30, factory=ReadOnlyConnection)
            connection.executescript(SCHEMA)
            found = connection.execute(
                "SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.Error as exc:
            raise InputError(f"cannot read the store {path}: {exc}") from None
        if found is not None and int(found[0]) > SCHEMA_VERSION:
            raise InputError(f"store {path} has schema version {found[0]}, newer than this "
                             f"replay ({SCHEMA_VERSION}); upgrade replay")
        store._connection = connection
        return store

    def _connect(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and not os.access(self.path, os.W_OK):
                raise PermissionError(f"permission denied: {self.path}")
            if not os.access(self.path.parent, os.W_OK):
                raise PermissionError(f"permission denied: {self.path.parent}")
            connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            with connection:
                connection.executescript("BEGIN;" + SCHEMA + "COMMIT;")
                connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                                   (str(SCHEMA_VERSION),))
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"cannot use the store {self.path}: {exc}") from None
        found = connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if int(found[0]) > SCHEMA_VERSION:
            raise InputError(f"store {self.path} has schema version {found[0]}, newer than this "
                             f"replay ({SCHEMA_VERSION}); upgrade replay")
        self._connection = connection

    @property
    def db(self) -> sqlite3.Connection:
        assert self._connection is not None, "store is closed"
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def artifact_path(self, *parts: str) -> Path:
        """A path under the artifact folder (not yet written); one that would leave it is
        refused."""
        return within(self.artifacts, *parts)

    def write_artifact(self, data: bytes, *parts: str) -> Path:
        """Write an artifact atomically and return its path."""
        return write_atomic(self.artifact_path(*parts), data)

    def record_validation(self, instance_id: str, backend: str, status: str,
                          reasons: list[str], checks: dict[str, Any]) -> None:
        """Write (or replace) the validation record of an instance on a backend."""
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO validations VALUES (?, ?, ?, ?, ?, ?)",
                (instance_id, backend, status, json.dumps(reasons), json.dumps(checks),
                 time.time()),
            )

    def validation(self, instance_id: str, backend: str) -> dict[str, Any] | None:
        """The validation record of an instance on a backend, if any."""
        row = self.db.execute(
            "SELECT status, reasons, checks, created_at FROM validations "
            "WHERE instance_id=? AND backend=?", (instance_id, backend)).fetchone()
        if row is None:
            return None
        return {"status": row[0], "reasons": json.loads(row[1]), "checks": json.loads(row[2]),
                "created_at": row[3]}

    def record_continuation(self, key: str, instance_id: str, arm: str, passed: bool,
                            grade: str) -> None:
        """Keep a finished continuation (its trace and tree are artifacts already written)."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO continuations VALUES (?, ?, ?, ?, ?, ?)",
                            (key, instance_id, arm, int(passed), grade, time.time()))

    def continuation(self, key: str) -> dict[str, Any] | None:
        """A finished continuation by key, if kept."""
        row = self.db.execute("SELECT instance_id, arm, passed, grade FROM continuations "
                              "WHERE key=?", (key,)).fetchone()
        if row is None:
            return None
        return {"instance_id": row[0], "arm": row[1], "passed": bool(row[2]), "grade": row[3]}
