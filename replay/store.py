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

from replay.core.errors import InputError
from replay.core.files import write_atomic
from replay.core.paths import within

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
_CREATE_INDEX = re.compile(r"\s*CREATE (UNIQUE )?INDEX IF NOT EXISTS ", re.IGNORECASE)
_CONSTRAINTS = ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "CONSTRAINT")


def declared_columns(statement: str) -> list[str]:
    """The column names a `CREATE TABLE` statement declares (its constraints left out)."""
    body = statement[statement.index("(") + 1:statement.rindex(")")]
    items, depth, start = [], 0, 0
    for index, char in enumerate(body):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(body[start:index])
            start = index + 1
    items.append(body[start:])
    words = [item.split() for item in items if item.strip()]
    return [parts[0] for parts in words if parts[0].upper() not in _CONSTRAINTS]


class StoreConnection(sqlite3.Connection):
    """A connection to a store whose `CREATE TABLE IF NOT EXISTS` scripts first check that each
    table the file has already holds the columns the script declares: a store written by
    another version or program is refused in one line (bad input) before anything is written,
    not met as an SQLite error halfway through a command."""

    store_path: Path | None = None

    def check_tables(self, script: str) -> list[str]:
        """The script's statements, once every table they create that exists has its columns."""
        statements = [part for part in script.split(";") if part.strip()]
        for statement in statements:
            match = _CREATE_TABLE.match(statement)
            if match is None or not self.has_table(match.group(1)):
                continue
            found = {row[1] for row in self.execute(f"PRAGMA table_info({match.group(1)})")}
            missing = [name for name in declared_columns(statement) if name not in found]
            if missing:
                raise InputError(f"{self.store_path or 'the store'} is not a store of this "
                                 f"replay: its table {match.group(1)} has no column "
                                 f"{', '.join(missing)} (written by another version or "
                                 "program); give another --store")
        return statements

    def has_table(self, name: str) -> bool:
        """Whether the file (or this connection's temporary memory) has table `name`."""
        return self.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=? UNION "
                            "SELECT 1 FROM sqlite_temp_master WHERE type='table' AND name=?",
                            (name, name)).fetchone() is not None

    def executescript(self, script: str) -> sqlite3.Cursor:  # type: ignore[override]
        self.check_tables(script)
        return super().executescript(script)


class ReadOnlyConnection(StoreConnection):
    """A connection to a file opened read-only, on which the readers' `CREATE TABLE IF NOT
    EXISTS` scripts write nothing: a table the file lacks is made empty in temporary memory,
    one the file has is left as it is (once its columns are checked), an index is not made; any
    other statement of a script is refused."""

    def executescript(self, script: str) -> sqlite3.Cursor:  # type: ignore[override]
        for statement in self.check_tables(script):
            if _CREATE_INDEX.match(statement):
                continue  # an index changes no answer: a read-only store goes without
            match = _CREATE_TABLE.match(statement)
            if match is None:
                raise sqlite3.OperationalError(f"read-only store: {statement.strip()[:40]}")
            if not self.has_table(match.group(1)):
                self.execute(statement.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
        return self.cursor()


def check_store_file(connection: StoreConnection, path: Path) -> None:
    """Refuse, reading only, an SQLite file that is not a store of this replay's schema: other
    tables and no `meta`, tables without the columns of this replay's, or another schema
    version. A file without tables is a new store."""
    connection.store_path = path
    tables = [row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    if not tables:
        return
    if "meta" not in tables:
        raise InputError(f"{path} is not a replay store: an SQLite file with other tables "
                         f"({', '.join(tables[:4])}); give another --store")
    connection.check_tables(SCHEMA)
    found = connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    version = None if found is None else str(found[0])
    if version is not None and version.isdigit() and int(version) > SCHEMA_VERSION:
        raise InputError(f"store {path} has schema version {version}, newer than this "
                         f"replay ({SCHEMA_VERSION}); upgrade replay")
    if version is not None and version != str(SCHEMA_VERSION):
        raise InputError(f"{path} is not a store of this replay: schema version {version}, "
                         f"not {SCHEMA_VERSION}; give another --store")


_READS = (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
          sqlite3.SQLITE_RECURSIVE, sqlite3.SQLITE_TRANSACTION)


def _reads_only(action: int, name: str | None, _detail: str | None, database: str | None,
                _trigger: str | None) -> int:
    """An SQLite authorizer: reads of any database, and changes to temporary memory only."""
    if action in _READS or database == "temp":
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and name == "table_info":
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _checked(connection: StoreConnection, path: Path) -> None:
    """`check_store_file`, closing the connection when the file is refused."""
    try:
        check_store_file(connection, path)
    except InputError:
        connection.close()
        raise


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
            _checked(connection, path)
            connection.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise InputError(f"cannot read the store {path}: {exc}") from None
        store._connection = connection
        return store

    @classmethod
    def peek(cls, path: Path) -> Store:
        """The store at `path` for reading only, or, when there is no file, an empty store in
        memory: a command checks its input against what is stored without creating or changing
        anything, and opens the store to write only once all of it is good.

        The file is opened as writers open it (so that SQLite, closing the last connection,
        removes the `-wal` and `-shm` files it made), with an authorizer that refuses every
        change to it: tables it lacks are made in temporary memory (`ReadOnlyConnection`)."""
        store = cls(path)
        exists = path.exists()
        try:
            connection = sqlite3.connect(path if exists else ":memory:", timeout=30,
                                         isolation_level=None, factory=ReadOnlyConnection)
            if exists:
                connection.set_authorizer(_reads_only)
                _checked(connection, path)
            connection.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise InputError(f"cannot read the store {path}: {exc}") from None
        store._connection = connection
        return store

    def _connect(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and not os.access(self.path, os.W_OK):
                raise PermissionError(f"permission denied: {self.path}")
            if not os.access(self.path.parent, os.W_OK):
                raise PermissionError(f"permission denied: {self.path.parent}")
            connection = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                         factory=StoreConnection)
            _checked(connection, self.path)  # before anything is written
            connection.execute("PRAGMA journal_mode=WAL")
            with connection:
                connection.executescript("BEGIN;" + SCHEMA + "COMMIT;")
                connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                                   (str(SCHEMA_VERSION),))
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"cannot use the store {self.path}: {exc}") from None
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
