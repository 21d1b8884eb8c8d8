"""Every table of the store, in one schema with one version.

`TABLES` is the shape a store of `SCHEMA_VERSION` has: a new store is made with all of it, an
older one is brought to it by `replay.store.migrations`. A table is added here and, with the
version raised by one, by a migration step that makes it in the stores written before.
"""

from __future__ import annotations

SCHEMA_VERSION = 3

META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"

TABLES = {
    "meta": META,
    "validations": """CREATE TABLE IF NOT EXISTS validations (
    instance_id TEXT NOT NULL,
    backend TEXT NOT NULL,
    status TEXT NOT NULL,
    reasons TEXT NOT NULL,
    checks TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (instance_id, backend)
)""",
    "continuations": """CREATE TABLE IF NOT EXISTS continuations (
    key TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL,
    arm TEXT NOT NULL,
    passed INTEGER NOT NULL,
    grade TEXT NOT NULL,
    created_at REAL NOT NULL
)""",
    "continuation_calls": """CREATE TABLE IF NOT EXISTS continuation_calls (
    continuation TEXT NOT NULL,
    step INTEGER NOT NULL,
    call TEXT NOT NULL,
    PRIMARY KEY (continuation, step)
)""",
    "runs": """CREATE TABLE IF NOT EXISTS runs (
    name TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    plan TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
)""",
    "cells": """CREATE TABLE IF NOT EXISTS cells (
    run TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    arm TEXT NOT NULL,
    summarizer TEXT NOT NULL,
    seed_index INTEGER NOT NULL,
    status TEXT NOT NULL,
    passed INTEGER,
    record TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run, instance_id, arm, summarizer, seed_index)
)""",
    "summaries": """CREATE TABLE IF NOT EXISTS summaries (
    key TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL,
    summarizer TEXT NOT NULL,
    seed_index INTEGER NOT NULL,
    record TEXT NOT NULL,
    created_at REAL NOT NULL
)""",
    "model_calls": """CREATE TABLE IF NOT EXISTS model_calls (
    key TEXT PRIMARY KEY,
    alias TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    seed_index INTEGER NOT NULL,
    request_json TEXT NOT NULL,
    response_json TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    cost REAL NOT NULL,
    created_at TEXT NOT NULL,
    seconds REAL,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0
)""",
    "model_refusals": """CREATE TABLE IF NOT EXISTS model_refusals (
    key TEXT PRIMARY KEY,
    alias TEXT NOT NULL,
    status INTEGER NOT NULL,
    context INTEGER NOT NULL,
    message TEXT NOT NULL,
    request_json TEXT NOT NULL,
    created_at TEXT NOT NULL
)""",
    "histories": """CREATE TABLE IF NOT EXISTS histories (
    id TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL,
    trajectory TEXT NOT NULL,
    model TEXT NOT NULL,
    source TEXT NOT NULL,
    rule TEXT NOT NULL,
    step INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    resolved INTEGER,
    fingerprint TEXT NOT NULL,
    path TEXT NOT NULL,
    created_at REAL NOT NULL
)""",
    "trajectories": """CREATE TABLE IF NOT EXISTS trajectories (
    key TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL,
    model TEXT NOT NULL,
    source TEXT NOT NULL,
    steps INTEGER NOT NULL,
    exit_reason TEXT NOT NULL,
    resolved INTEGER,
    divergences INTEGER NOT NULL,
    path TEXT NOT NULL,
    created_at REAL NOT NULL
)""",
    "retention": """CREATE TABLE IF NOT EXISTS retention (
    run TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    summarizer TEXT NOT NULL,
    seed_index INTEGER NOT NULL,
    share REAL,
    found INTEGER NOT NULL,
    size INTEGER NOT NULL,
    source TEXT NOT NULL,
    record TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run, instance_id, summarizer, seed_index)
)""",
}

INDEXES = ("CREATE INDEX IF NOT EXISTS histories_instance ON histories (instance_id, rule)",)

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


def columns(table: str) -> list[str]:
    """The columns table `table` has at `SCHEMA_VERSION`."""
    return declared_columns(TABLES[table])
