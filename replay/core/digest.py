"""Content identities: the sha256 of a value's canonical JSON, computed here and nowhere else.

Every key of replay (model calls and refusals, histories, trajectories, continuations,
summaries, runs, recipes, images) is `digest` of the content that decides it; the domain
functions (`cache_key`, `continuation_key`, ...) only say what that content is. The JSON is
canonical (sorted keys, no whitespace, UTF-8 as is), so equal content gives an equal key on any
machine, and the key of a stored record never changes while its content does not. Raw content
(a diff, a file, a prompt's text) is keyed by `sha256_hex`, a sequence's prefixes (what a
provider's prompt cache keys) by `chained`. No other module computes a key (the prompt sync
only checks a download against the digest its registry publishes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any


def canonical_json(value: Any, *, spaced: bool = False) -> str:
    """JSON with sorted keys and no whitespace: equal content, equal text.

    `spaced` writes the JSON that `json.dumps` writes by default instead (`", "` and `": "`,
    non-ASCII escaped), keys sorted: the form the environments' recipe and image keys and the
    agent's settings in a continuation's key were first written in, kept so every key made
    before is found again.
    """
    if spaced:
        return json.dumps(value, sort_keys=True)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any, *, spaced: bool = False) -> str:
    """The sha256 hex digest of the canonical JSON of `value` (`spaced`: see `canonical_json`)."""
    return sha256_hex(canonical_json(value, spaced=spaced))


def chained(values: Iterable[Any]) -> list[tuple[str, int]]:
    """For each of `values` in turn, the digest of the canonical JSON of every value up to it
    (written one after another) and the characters of that JSON: the identities of a
    sequence's prefixes, as a provider's prompt cache keys them."""
    running = hashlib.sha256()
    chars = 0
    found = []
    for value in values:
        piece = canonical_json(value)
        running.update(piece.encode("utf-8"))
        chars += len(piece)
        found.append((running.copy().hexdigest(), chars))
    return found


def sha256_hex(data: bytes | str) -> str:
    """The sha256 hex digest of raw content (text as UTF-8): a diff, a file, a prompt's text."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()
