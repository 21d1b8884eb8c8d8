"""Every model call, kept in the `model_calls` table of the engine's SQLite store.

The key is the sha256 of the canonical JSON of the full request content (provider, base URL,
model, messages, tools, temperature, max_tokens, seed, and tool_choice and extra body fields
when set) and the caller's seed index: confirmation runs 0, 1, 2 are different samples, and a
repeated run is answered from here for free. Only the request body is stored, never headers,
so keys never reach the file.

Each call keeps its usage: `cached_tokens` and `cache_write_tokens` are the prompt tokens the
provider read from and wrote to its own prompt cache when the call was made. A reply answered
from this table is replayed from the call cache: no provider was called, nothing was billed.

Requests the server refused for their content are kept too, in `model_refusals`, keyed by the
content without the seed: a refusal does not depend on the sample, so the same request at
another seed is refused from here without being sent.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replay.core.digest import canonical_json, digest
from replay.core.errors import InputError
from replay.models.transport import ModelRefused
from replay.models.types import ChatRequest, ChatResponse, ModelSpec

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_calls (
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
);
CREATE TABLE IF NOT EXISTS model_refusals (
    key TEXT PRIMARY KEY,
    alias TEXT NOT NULL,
    status INTEGER NOT NULL,
    context INTEGER NOT NULL,
    message TEXT NOT NULL,
    request_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


def request_content(spec: ModelSpec, request: ChatRequest, seed_index: int) -> dict[str, Any]:
    """Everything that decides a reply: what is hashed into the key and stored as the request."""
    content: dict[str, Any] = {
        "provider": spec.provider,
        "base_url": spec.base_url,
        "model": spec.model,
        "messages": request.messages,
        "tools": request.tools,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "seed_index": seed_index,
    }
    if request.tool_choice is not None:
        content["tool_choice"] = request.tool_choice
    if request.extra_body:
        content["extra_body"] = request.extra_body
    return content


def refusal_key(content: dict[str, Any]) -> str:
    """The key of a refusal: the request content without its seed and seed index."""
    return cache_key({name: value for name, value in content.items()
                      if name not in ("seed", "seed_index")})


def cache_key(content: dict[str, Any]) -> str:
    """The key of a model call: the digest of its request content."""
    return digest(content)


# Columns added since the first stores: a store made before gets them, its rows NULL (no time
# measured) and 0 (no cache writes reported).
_ADDED_COLUMNS = (("seconds", "REAL"), ("cache_write_tokens", "INTEGER NOT NULL DEFAULT 0"))


def _add_columns(db: sqlite3.Connection) -> None:
    """Give a store made before them the columns added since (`_ADDED_COLUMNS`)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(model_calls)")}
    for name, kind in _ADDED_COLUMNS:
        if name not in columns:
            db.execute(f"ALTER TABLE model_calls ADD COLUMN {name} {kind}")


class CallCache:
    """The `model_calls` table in the SQLite file at `path` (created with its parent if absent).

    Safe to share between threads; several processes may use one file (WAL mode). Raises
    `InputError` naming the file when it is not an SQLite database.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            with self._db:
                self._db.executescript(_SCHEMA)
                _add_columns(self._db)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise InputError(f"{self.path} is not a usable SQLite database: {exc}") from None

    def get(self, key: str) -> ChatResponse | None:
        """The stored reply for `key`, marked `from_cache`; None on a miss or a corrupt row."""
        with self._lock:
            row = self._db.execute(
                "SELECT response_json FROM model_calls WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        try:
            response = ChatResponse.model_validate_json(row[0])
        except ValidationError:
            logger.warning("model_calls row %s is corrupt; treating it as a miss", key[:12])
            return None
        return response.model_copy(update={"from_cache": True})

    def put(self, key: str, spec: ModelSpec, content: dict[str, Any],
            response: ChatResponse) -> None:
        """Store one call in one transaction, replacing any row with the same key."""
        usage = response.usage
        row = (
            key, spec.alias, spec.provider, spec.model, content["seed_index"],
            canonical_json(content), response.model_dump_json(exclude={"from_cache"}),
            usage.input_tokens, usage.output_tokens, usage.cached_tokens, response.cost,
            datetime.now(UTC).isoformat(timespec="seconds"), response.latency,
            usage.cache_write_tokens,
        )
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO model_calls (key, alias, provider, model, seed_index,"
                " request_json, response_json, input_tokens, output_tokens, cached_tokens, cost,"
                " created_at, seconds, cache_write_tokens)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    def refusal(self, key: str) -> ModelRefused | None:
        """The refusal kept under `key` (see `refusal_key`), as the error to raise; or None."""
        with self._lock:
            row = self._db.execute("SELECT status, context, message FROM model_refusals "
                                   "WHERE key = ?", (key,)).fetchone()
        return None if row is None else ModelRefused(row[2], row[0], bool(row[1]))

    def keep_refusal(self, key: str, spec: ModelSpec, content: dict[str, Any],
                     refused: ModelRefused) -> None:
        """Keep a refusal under `key` (see `refusal_key`)."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO model_refusals VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, spec.alias, refused.status, int(refused.context), str(refused),
                 canonical_json(content), datetime.now(UTC).isoformat(timespec="seconds")))

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> CallCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
