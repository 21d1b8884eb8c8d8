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

from pathlib import Path
from typing import Any

from replay.core.digest import digest
from replay.models.transport import ModelRefused
from replay.models.types import ChatRequest, ModelSpec
from replay.records.reply import CallRequest, ChatResponse, Refusal
from replay.store.calls import CallTable


def call_request(spec: ModelSpec, request: ChatRequest, seed_index: int) -> CallRequest:
    """The record of `request` (the spec's settings applied) sent to `spec` for sample
    `seed_index`: what its key is made of and the call cache keeps."""
    return CallRequest(spec.alias, spec.provider, spec.base_url, spec.model, request.messages,
                       request.tools, request.temperature, request.max_tokens, request.seed,
                       seed_index, request.tool_choice, request.extra_body or None)


def request_key(request: CallRequest) -> str:
    """The key of a model call: the digest of its request's content."""
    return cache_key(request.content())


def refusal_key(request: CallRequest) -> str:
    """The key of a refusal: the request's content without its seed and seed index."""
    return cache_key({name: value for name, value in request.content().items()
                      if name not in ("seed", "seed_index")})


def cache_key(content: dict[str, Any]) -> str:
    """The digest of a request's content (`CallRequest.content`)."""
    return digest(content)


class CallCache:
    """The `model_calls` table of the store at `path` (created with its parent if absent).

    Safe to share between threads; several processes may use one file (WAL mode). Raises
    `InputError` naming the file when it is not a store this replay can use.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._table = CallTable(self.path)

    def get(self, key: str) -> ChatResponse | None:
        """The stored reply for `key`, marked `from_cache`; None on a miss or a corrupt row."""
        return self._table.reply(key)

    def put(self, key: str, request: CallRequest, response: ChatResponse) -> None:
        """Store one call in one transaction, replacing any row with the same key."""
        self._table.put(key, request, response)

    def refusal(self, key: str) -> ModelRefused | None:
        """The refusal kept under `key` (see `refusal_key`), as the error to raise; or None."""
        found = self._table.refusal(key)
        return None if found is None else ModelRefused(found.message, found.status,
                                                       found.context)

    def keep_refusal(self, key: str, request: CallRequest, refused: ModelRefused) -> None:
        """Keep a refusal of `request` under `key` (see `refusal_key`)."""
        self._table.keep_refusal(key, request,
                                 Refusal(refused.status, refused.context, str(refused)))

    def close(self) -> None:
        """Close the connection."""
        self._table.close()

    def __enter__(self) -> CallCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
