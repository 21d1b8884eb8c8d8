"""The `model_calls` and `model_refusals` tables: every model call kept by the key of its
request's content, and the requests a server refused for their content.

`CallTable` is the writers' side (`replay.models.cache.CallCache` builds on it): one connection
that any thread may use, one at a time; it takes and gives `ChatResponse` and `Refusal`
records, and the `CallRequest` each answers (its content kept beside them). The readers' side
(`kept_calls`: what the calls of a cell used, by the keys its records carry, as `CallUsage`;
`seconds_total`) reads a store opened any way. What the key and the request's content hold
is the models' business.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from replay.core.digest import canonical_json
from replay.records.reply import CallRequest, ChatResponse, Refusal
from replay.store.database import Store

logger = logging.getLogger(__name__)


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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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

    def reply(self, key: str) -> ChatResponse | None:
        """The reply kept under `key`, marked `from_cache`; None on a miss or a corrupt row."""
        with self._lock:
            row = self._store._db.execute("SELECT response_json FROM model_calls WHERE key = ?",
                                          (key,)).fetchone()
        if row is None:
            return None
        try:
            response = ChatResponse.model_validate_json(row[0])
        except ValidationError:
            logger.warning("model_calls row %s is corrupt; treating it as a miss", key[:12])
            return None
        return response.model_copy(update={"from_cache": True})

    def put(self, key: str, request: CallRequest, response: ChatResponse) -> None:
        """Keep one call (its request's content and its reply) in one statement, replacing any
        with the same key."""
        usage = response.usage
        with self._lock:
            self._store._db.execute(
                f"INSERT OR REPLACE INTO model_calls ({_COLUMNS}) VALUES ({', '.join('?' * 14)})",
                (key, request.alias, request.provider, request.model, request.seed_index,
                 canonical_json(request.content()),
                 response.model_dump_json(exclude={"from_cache"}), usage.input_tokens,
                 usage.output_tokens, usage.cached_tokens, response.cost, _now(),
                 response.latency, usage.cache_write_tokens))

    def refusal(self, key: str) -> Refusal | None:
        """The refusal kept under `key`, if any."""
        with self._lock:
            row = self._store._db.execute("SELECT status, context, message FROM model_refusals "
                                          "WHERE key = ?", (key,)).fetchone()
        return None if row is None else Refusal(row[0], bool(row[1]), row[2])

    def keep_refusal(self, key: str, request: CallRequest, refused: Refusal) -> None:
        """Keep a refusal of `request` in one statement, replacing any with the same key."""
        with self._lock:
            self._store._db.execute(
                "INSERT OR REPLACE INTO model_refusals VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, request.alias, refused.status, int(refused.context), refused.message,
                 canonical_json(request.content()), _now()))

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
        found.update((row[0], CallUsage(*row)) for row in store._db.execute(
            f"SELECT {_USAGE} FROM model_calls WHERE key IN ({marks})", batch))
    return found


def seconds_total(store: Store) -> tuple[float, int]:
    """The seconds every kept call took (unmeasured ones count 0), and how many calls."""
    total, count = store._db.execute(
        "SELECT COALESCE(SUM(seconds), 0), COUNT(*) FROM model_calls").fetchone()
    return float(total), int(count)
