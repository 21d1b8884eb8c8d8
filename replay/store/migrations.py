"""The steps that bring a store written by an older replay to this replay's schema.

A store keeps its schema version in `meta`. Every store replay wrote before versions were raised
says 1 and has the tables its commands happened to make, `model_calls` with or without the
columns added to it since (`seconds`, `cache_write_tokens`). `MIGRATIONS` lists the steps in
order, each naming the version a store has after it; a store opened to write runs the steps it
has not had, in one transaction, and records the new version. A store opened only to read is
never written: the tables it lacks are made empty in temporary memory and the columns it lacks
are given their defaults by a temporary view (`overlay`), so it reads as if it had been upgraded.

To add a table: give its statement in `replay.store.schema.TABLES`, raise `SCHEMA_VERSION` by
one, and append `Step(N, "what it adds", tables=("name",))`; a column added to a table older
stores have goes in the step's `columns`, with the value its old rows get.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from replay.store.schema import INDEXES, SCHEMA_VERSION, TABLES

FIRST_VERSION = 1  # what every store written before versions were raised says


@dataclass(frozen=True)
class Column:
    """A column a step adds to a table older stores have: its declaration and the value the
    rows written before it read as."""

    name: str
    declaration: str
    default: str


@dataclass(frozen=True)
class Step:
    """One migration: the version a store has after it, what it changes, the tables it makes
    where they are missing and the columns it adds where they are missing (by table)."""

    version: int
    about: str
    tables: tuple[str, ...] = ()
    columns: dict[str, tuple[Column, ...]] = field(default_factory=dict)

    def upgrade(self, db: sqlite3.Connection) -> None:
        """Apply the step inside the caller's transaction (each change only where needed)."""
        for table, added in self.columns.items():
            found = table_columns(db, table)
            for column in added:
                if found and column.name not in found:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column.name} "
                               f"{column.declaration}")
        for table in self.tables:
            db.execute(TABLES[table])


MIGRATIONS: tuple[Step, ...] = (
    Step(2, "every table of the schema in every store (each command made its own before); "
            "model_calls keeps each call's seconds and the prompt tokens written to the "
            "provider's cache (NULL and 0 for calls kept before)",
         tables=("meta", "validations", "continuations", "runs", "cells", "summaries",
                 "model_calls", "model_refusals", "histories", "trajectories", "retention"),
         columns={"model_calls": (Column("seconds", "REAL", "NULL"),
                                  Column("cache_write_tokens", "INTEGER NOT NULL DEFAULT 0",
                                         "0"))}),
    Step(3, "continuation_calls: the key of each agent step's model call, kept with its "
            "continuation (continuations kept before list none)",
         tables=("continuation_calls",)),
)


def table_columns(db: sqlite3.Connection, table: str, schema: str = "main") -> list[str]:
    """The columns table `table` has in the file (`main`), or none when it has no such table."""
    return [row[1] for row in db.execute(f"PRAGMA {schema}.table_info({table})")]


def pending(version: int) -> list[Step]:
    """The steps a store of schema version `version` has not had, in order."""
    return [step for step in MIGRATIONS if step.version > version]


def added_since(version: int) -> dict[str, dict[str, Column]]:
    """Table -> the columns a store of `version` may lack, since later steps add them."""
    added: dict[str, dict[str, Column]] = {}
    for step in pending(version):
        for table, columns in step.columns.items():
            added.setdefault(table, {}).update({column.name: column for column in columns})
    return added


def upgrade(db: sqlite3.Connection, version: int | None) -> None:
    """Bring the file to `SCHEMA_VERSION` in one transaction (a new one when `version` is None:
    every table made at once) and record the version."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for step in pending(SCHEMA_VERSION if version is None else version):
            step.upgrade(db)
        for statement in (*TABLES.values(), *INDEXES):
            db.execute(statement)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                   (str(SCHEMA_VERSION),))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def overlay(db: sqlite3.Connection, version: int | None) -> None:
    """Make a file opened only to read look like `SCHEMA_VERSION` without writing to it: the
    tables it lacks as empty temporary tables, the columns it lacks (see `added_since`) as a
    temporary view of its table with their old rows' values."""
    added = added_since(SCHEMA_VERSION if version is None else version)
    for table, statement in TABLES.items():
        found = table_columns(db, table)
        if not found:
            db.execute(statement.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
            continue
        missing = [column for name, column in added.get(table, {}).items()
                   if name not in found]
        if missing:
            values = ", ".join(f"{column.default} AS {column.name}" for column in missing)
            db.execute(f"CREATE TEMP VIEW {table} AS SELECT *, {values} FROM main.{table}")
