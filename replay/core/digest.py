"""Content identities: the sha256 of a value's canonical JSON, computed here and nowhere else.

Every key of replay (model calls and refusals, histories, trajectories, continuations,
summaries, runs, recipes, images) is `digest` of the content that decides it; the domain
functions (`cache_key`, `continuation_key`, ...) only say what that content is. The JSON is
canonical (sorted keys, no whitespace, UTF-8 as is), so equal content gives an equal key on any
machine, and the key of a stored record never changes while its content does not.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal content, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any, *, spaced: bool = False) -> str:
    """The sha256 hex digest of the canonical JSON of `value`.

    `spaced` hashes the JSON that `json.dumps` writes by default instead (`", "` and `": "`,
    non-ASCII escaped), keys sorted: the form the environments' recipe and image keys were
    first written in, kept so every environment built before is found again.
    """
    text = json.dumps(value, sort_keys=True) if spaced else canonical_json(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
