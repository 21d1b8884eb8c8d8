"""The `summaries` table: POST summaries kept by the key of what determines them, and the
summarizer requests a server refused (a record with `refused` and no text).

A summary is kept as the JSON of its record (`summary_record`), with the keys of the model calls
that wrote it (`call_keys`; `calls` counts its requests); the first writer of a key wins. The
summary stage (`replay.pipeline.summary`) keeps and reads them here.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from replay.core.digest import digest
from replay.records.history import History
from replay.records.summary import Summary
from replay.store.database import Store


def summary_key(identity: dict[str, Any], history: History, seed_index: int) -> str:
    """The key a summary is kept by: what determines it, the summarizer's `identity` (its model,
    settings and prompt text: `replay.pipeline.summary.Summarizer.identity`), the history and
    the seed index."""
    content = {"instance": history.instance_id, "snapshot": history.snapshot.fingerprint,
               "history": digest(history.messages), **identity, "seed_index": seed_index}
    return digest(content)


def record(store: Store, key: str) -> dict[str, Any] | None:
    """The record kept under `key`, if any."""
    row = store.db.execute("SELECT record FROM summaries WHERE key=?", (key,)).fetchone()
    return None if row is None else json.loads(row[0])


@dataclass(frozen=True)
class SummaryRow:
    """A kept summary as it is kept and shipped between stores: its instance, sample and
    record."""

    instance_id: str
    seed_index: int
    record: dict[str, Any]


def keep(store: Store, key: str, row: SummaryRow) -> None:
    """Keep a summary's row under `key` (an existing one stays)."""
    store.db.execute("INSERT OR IGNORE INTO summaries VALUES (?, ?, ?, ?, ?, ?)",
                     (key, row.instance_id, row.record["summarizer"], row.seed_index,
                      json.dumps(row.record), time.time()))


def row(store: Store, key: str) -> SummaryRow | None:
    """The row kept under `key`, if any."""
    found = store.db.execute("SELECT instance_id, seed_index, record FROM summaries WHERE key=?",
                             (key,)).fetchone()
    return None if found is None else SummaryRow(found[0], found[1], json.loads(found[2]))


def summary(store: Store, key: str) -> Summary | None:
    """The summary kept under `key`, if any (not a refusal)."""
    data = record(store, key)
    if data is None or data.get("refused"):
        return None
    return Summary(data["summarizer"], data["text"], data["messages"],
                   input_tokens=data["input_tokens"], output_tokens=data["output_tokens"],
                   cost=data["cost"], details=data.get("details") or {},
                   calls=tuple(data.get("call_keys") or ()))


def refusal(store: Store, key: str) -> str | None:
    """Why the summarizer's request for the summary `key` was refused, if it was."""
    data = record(store, key)
    return None if data is None else data.get("refused")


def keep_written(store: Store, identity: dict[str, Any], history: History, seed_index: int,
                 summarizer: str, summary: Summary | None, refused: str | None) -> str:
    """Keep a summary just written of `history` (or, with no summary, that the summarizer's
    server `refused` to write it) under its key (`summary_key`), which is returned."""
    kept = summary_record(summary) if summary is not None else {
        "summarizer": summarizer, "text": "", "messages": None, "calls": 0,
        "input_tokens": 0, "output_tokens": 0, "cost": 0.0, "details": {}, "refused": refused or ""}
    row = SummaryRow(history.instance_id, seed_index, kept)
    key = summary_key(identity, history, seed_index)
    keep(store, key, row)
    return key


def summary_record(summary: Summary) -> dict[str, Any]:
    """What is kept of a summary: its requests live in the model call cache, under the keys
    the summary carries."""
    return {"summarizer": summary.summarizer, "text": summary.text,
            "messages": summary.messages, "calls": len(summary.requests),
            "call_keys": list(summary.calls),
            "input_tokens": summary.input_tokens, "output_tokens": summary.output_tokens,
            "cost": summary.cost, "details": summary.details}
