"""Results in one SQLite file, artifacts (logs, snapshots, traces) as files beside it.

Every record is written in one transaction and every artifact through a temporary file and a
rename, so a process killed at any moment leaves no half record. A store is checked before
anything is written (`replay.store.checks`) and brought to this replay's schema when opened to
write (`replay.store.migrations`); opened to read, it is never written.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from replay.core.errors import InputError
from replay.store import artifacts
from replay.store.checks import stored_version
from replay.store.migrations import overlay, upgrade
from replay.store.schema import SCHEMA_VERSION

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


def _read_as_upgraded(connection: sqlite3.Connection, path: Path) -> None:
    """Check the file and give it, in temporary memory only, what this schema has and it lacks;
    the connection is closed when the file is refused."""
    try:
        overlay(connection, stored_version(connection, path))
    except BaseException:
        connection.close()
        raise


@contextmanager
def _opening(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on the store's folder while a process checks the store's version,
    switches it to WAL and upgrades it: SQLite answers "database is locked" at once, without
    waiting, to a second process that reads a new file's version while the first makes its tables
    (two sweep workers opening one node store together). The lock is on the folder, never on the
    database file: closing any descriptor of that file would drop SQLite's own locks on it."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


class Store:
    """The results database and its artifact folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._artifacts = artifacts.folder(path)
        self._connection: sqlite3.Connection | None = None

    @classmethod
    def open(cls, path: Path, *, threads: bool = False) -> Store:
        """Open (creating if needed, upgrading if older) the store at `path`; one clear error
        if it cannot be used. With `threads`, its connection may be used from any thread (the
        caller keeps it to one at a time)."""
        store = cls(path)
        store._connect(threads)
        return store

    @classmethod
    def open_read_only(cls, path: Path) -> Store:
        """Open an existing store for reading only, with SQLite's read-only mode: nothing is
        ever written to it (an older one reads as upgraded, see `migrations.overlay`); one
        clear error if it is not a store. Where this process may write the file and its folder,
        it is opened as `peek` opens it, so that closing it removes the `-wal` and `-shm` files
        SQLite made for reading it."""
        if path.is_file() and os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
            return cls.peek(path)
        store = cls(path)
        try:
            connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                         timeout=30, isolation_level=None)
            _read_as_upgraded(connection, path)
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
        change to it: what it lacks is made in temporary memory (`migrations.overlay`)."""
        store = cls(path)
        exists = path.exists()
        try:
            connection = sqlite3.connect(path if exists else ":memory:", timeout=30,
                                         isolation_level=None)
            if exists:
                connection.set_authorizer(_reads_only)
                _read_as_upgraded(connection, path)
            else:
                upgrade(connection, None)
        except sqlite3.Error as exc:
            raise InputError(f"cannot read the store {path}: {exc}") from None
        store._connection = connection
        return store

    def _connect(self, threads: bool) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and not os.access(self.path, os.W_OK):
                raise PermissionError(f"permission denied: {self.path}")
            if not os.access(self.path.parent, os.W_OK):
                raise PermissionError(f"permission denied: {self.path.parent}")
            connection = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                         check_same_thread=not threads)
            with _opening(self.path.parent):
                try:
                    version = stored_version(connection, self.path)  # before anything is written
                except InputError:
                    connection.close()
                    raise
                connection.execute("PRAGMA journal_mode=WAL")
                if version != SCHEMA_VERSION:
                    upgrade(connection, version)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"cannot use the store {self.path}: {exc}") from None
        self._connection = connection

    @property
    def _db(self) -> sqlite3.Connection:
        """The open connection (autocommit: one statement, one transaction); private to
        `replay.store`: the repositories' functions are the store's surface."""
        assert self._connection is not None, "store is closed"
        return self._connection

    def close(self) -> None:
        """Close the connection (again: nothing)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of its rows are written, or none."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _artifact_path(self, *parts: str) -> Path:
        """A path under the artifact folder (not yet written); one that would leave it is
        refused. Private to `replay.store`, as every method named with an underscore here."""
        return artifacts.path(self._artifacts, *parts)

    def _folder(self, kind: str, key: str) -> Path:
        """The folder of the files of the record of `kind` with `key` (`artifacts.keyed`)."""
        return self._artifact_path(*artifacts.keyed(kind, key))

    def _write_artifact(self, data: bytes | str, *parts: str) -> Path:
        """Write an artifact atomically and return its path."""
        return artifacts.write(self._artifacts, data, *parts)

    def _pack(self, *parts: str) -> artifacts.Files:
        """The finished files under an artifact folder, packed for another store (`_unpack`)."""
        return artifacts.pack(self._artifacts, *parts)

    def _unpack(self, files: artifacts.Files) -> None:
        """Write the files another store packed, each atomically."""
        artifacts.unpack(self._artifacts, files)
