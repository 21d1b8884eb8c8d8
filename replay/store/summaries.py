"""The `summaries` table: POST summaries kept by the key of what determines them, and the
summarizer requests a server refused (a refusal kept in the summary's place).

A summary is kept as a `KeptSummary` (its record's JSON holds the keys of the model calls that
wrote it, `call_keys`, and `calls` counts its requests); the first writer of a key wins. The
summary stage (`replay.pipeline.summary`) keeps and reads them here.
"""

from __future__ import annotations

import json
import time
from typing import Any

from replay.core.digest import digest
from replay.records.history import History
from replay.records.stored import stamped, unstamped
from replay.records.summary import FORMAT, SCHEMA, KeptSummary, Summary
from replay.store.database import Store


def key(identity: dict[str, Any], history: History, seed_index: int) -> str:
    """The key a summary is kept by: what determines it, the summarizer's `identity` (its model,
    settings and prompt text: `replay.pipeline.summary.Summarizer.identity`), the history and
    the seed index."""
    content = {"instance": history.instance_id, "snapshot": history.snapshot.fingerprint,
               "history": digest(history.messages), **identity, "seed_index": seed_index}
    return digest(content)


def keep(store: Store, key: str, kept: KeptSummary) -> None:
    """Keep a summary (or a refusal) under `key` (an existing one stays)."""
    store._db.execute("INSERT OR IGNORE INTO summaries VALUES (?, ?, ?, ?, ?, ?)",
                      (key, kept.instance_id, kept.summarizer, kept.seed_index,
                       json.dumps(stamped(FORMAT, SCHEMA, _record(kept))), time.time()))


def find(store: Store, key: str) -> KeptSummary | None:
    """The summary (or refusal) kept under `key`, if any."""
    found = store._db.execute("SELECT instance_id, seed_index, record FROM summaries WHERE key=?",
                              (key,)).fetchone()
    if found is None:
        return None
    _, data = unstamped(json.loads(found[2]))
    keys = data.get("call_keys")
    summary = None if data.get("refused") else Summary(
        data["summarizer"], data["text"], data["messages"], input_tokens=data["input_tokens"],
        output_tokens=data["output_tokens"], cost=data["cost"],
        details=data.get("details") or {}, calls=tuple(keys or ()))
    return KeptSummary(found[0], found[1], data["summarizer"], summary, data.get("refused") or "",
                       int(data.get("calls") or 0), keys is not None)


def summary(store: Store, key: str) -> Summary | None:
    """The summary kept under `key`, if any (not a refusal)."""
    kept = find(store, key)
    return None if kept is None else kept.summary


def refusal(store: Store, key: str) -> str | None:
    """Why the summarizer's request for the summary `key` was refused, if it was."""
    kept = find(store, key)
    return None if kept is None else kept.refused or None


def keep_written(store: Store, identity: dict[str, Any], history: History, seed_index: int,
                 summarizer: str, summary: Summary | None, refused: str | None) -> str:
    """Keep a summary just written of `history` (or, with no summary, that the summarizer's
    server `refused` to write it) under its key (`key`), which is returned."""
    kept = KeptSummary(history.instance_id, seed_index,
                       summarizer if summary is None else summary.summarizer, summary,
                       "" if summary is not None else refused or "",
                       len(summary.requests) if summary is not None else 0)
    found = key(identity, history, seed_index)
    keep(store, found, kept)
    return found


def _record(kept: KeptSummary) -> dict[str, Any]:
    """What is kept of a summary: its requests live in the model call cache, under the keys
    the summary carries."""
    summary = kept.summary
    if summary is None:
        return {"summarizer": kept.summarizer, "text": "", "messages": None, "calls": 0,
                "input_tokens": 0, "output_tokens": 0, "cost": 0.0, "details": {},
                "refused": kept.refused}
    record = {"summarizer": summary.summarizer, "text": summary.text,
              "messages": summary.messages, "calls": kept.requests,
              "call_keys": list(summary.calls),
              "input_tokens": summary.input_tokens, "output_tokens": summary.output_tokens,
              "cost": summary.cost, "details": summary.details}
    if not kept.keys_recorded:
        del record["call_keys"]
    return record
