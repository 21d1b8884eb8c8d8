"""The `model_calls` and `model_refusals` tables: every model call kept by the key of its
request's content, and the requests a server refused for their content.

`CallTable` is the writers' side (`replay.models.cache.CallCache` builds on it): one connection
that any thread may use, one at a time. The readers' side (`kept_calls`: what the calls of a cell
used, by the keys its records carry, as `CallUsage`; `seconds_total`) reads a store opened any
way. What the key and the
JSON hold is the models' business; here they are only kept.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from replay.store.database import Store


@dataclass(frozen=True)
class CallRow:
    """One model call as kept: its key, who was asked, the request and reply JSON, its usage,
    cost, when it was made and the seconds it took (None: not measured)."""

    key: str
    alias: str
    provider: str
    model: str
    seed_index: int
    request_json: str
    response_json: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost: float
    created_at: str
    seconds: float | None
    cache_write_tokens: int


@dataclass(frozen=True)
class RefusalRow:
    """A request refused for its content: the status, whether its context was too long, the
    server's message, and the request JSON."""

    key: str
    alias: str
    status: int
    context: bool
    message: str
    request_json: str
    created_at: str


@dataclass(frozen=True)
class CallUsage:
    """What a kept model call used: its key, model, tokens, cost, when it was made and the
    seconds it took (None: not measured)."""

    key: str
    model: str
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    cost: float
    created_at: str
    seconds: float | None


_BATCH = 500  # keys asked for in one statement (SQLite allows 999 parameters at least)
_COLUMNS = ("key, alias, provider, model, seed_index, request_json, response_json, "
            "input_tokens, output_tokens, cached_tokens, cost, created_at, seconds, "
            "cache_write_tokens")


class CallTable:
    """The call tables of the store at `path` (made, or upgraded, as `Store.open` does), safe to
    share between threads; several processes may use one file (WAL mode)."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._store = Store.open(path, threads=True)

    def response_json(self, key: str) -> str | None:
        """The reply JSON kept under `key`, if any."""
        with self._lock:
            row = self._store.db.execute("SELECT response_json FROM model_calls WHERE key = ?",
                                         (key,)).fetchone()
        return None if row is None else row[0]

    def put(self, row: CallRow) -> None:
        """Keep one call in one statement, replacing any with the same key."""
        with self._lock:
            self._store.db.execute(f"INSERT OR REPLACE INTO model_calls ({_COLUMNS}) "
                                   f"VALUES ({', '.join('?' * 14)})",
                                   tuple(row.__dict__.values()))

    def refusal(self, key: str) -> RefusalRow | None:
        """The refusal kept under `key`, if any."""
        with self._lock:
            row = self._store.db.execute("SELECT * FROM model_refusals WHERE key = ?",
                                         (key,)).fetchone()
        return None if row is None else RefusalRow(row[0], row[1], row[2], bool(row[3]),
                                                   row[4], row[5], row[6])

    def keep_refusal(self, row: RefusalRow) -> None:
        """Keep a refusal in one statement, replacing any with the same key."""
        with self._lock:
            self._store.db.execute(
                "INSERT OR REPLACE INTO model_refusals VALUES (?, ?, ?, ?, ?, ?, ?)",
                (row.key, row.alias, row.status, int(row.context), row.message,
                 row.request_json, row.created_at))

    def close(self) -> None:
        """Close the connection."""
        self._store.close()


_USAGE = "key, model, input_tokens, cached_tokens, output_tokens, cost, created_at, seconds"


def kept_calls(store: Store, keys: Sequence[str]) -> dict[str, CallUsage]:
    """What the calls kept under `keys` used, by key (a key with no call is left out)."""
    found: dict[str, CallUsage] = {}
    for start in range(0, len(keys), _BATCH):
        batch = list(keys[start:start + _BATCH])
        marks = ", ".join("?" * len(batch))
        found.update((row[0], CallUsage(*row)) for row in store.db.execute(
            f"SELECT {_USAGE} FROM model_calls WHERE key IN ({marks})", batch))
    return found


def seconds_total(store: Store) -> tuple[float, int]:
    """The seconds every kept call took (unmeasured ones count 0), and how many calls."""
    total, count = store.db.execute(
        "SELECT COALESCE(SUM(seconds), 0), COUNT(*) FROM model_calls").fetchone()
    return float(total), int(count)
