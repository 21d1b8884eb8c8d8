"""POST summaries kept in the store by what determines them, and summarizer requests the server
refused (a record with `refused` and no text), so that neither is asked for again."""
from __future__ import annotations

from dataclasses import asdict
from typing import Any

from replay.records.summary import Summary
from replay.store import Store, summaries


def kept_summary(store: Store, key: str) -> Summary | None:
    """A summary kept under `key`, if any."""
    data = summaries.record(store, key)
    if data is None or data.get("refused"):
        return None
    return Summary(data["summarizer"], data["text"], data["messages"],
                   input_tokens=data["input_tokens"], output_tokens=data["output_tokens"],
                   cost=data["cost"], details=data.get("details") or {})


def kept_refusal(store: Store, key: str) -> str | None:
    """Why the summarizer's request for the summary `key` was refused, if it was."""
    data = summaries.record(store, key)
    return None if data is None else data.get("refused")


def refusal_record(summarizer: str, refused: str) -> dict[str, Any]:
    """What is kept of a summary the summarizer's server refused to write."""
    return {"summarizer": summarizer, "text": "", "messages": None, "calls": 0,
            "input_tokens": 0, "output_tokens": 0, "cost": 0.0, "details": {},
            "refused": refused}


def summary_record(summary: Summary) -> dict[str, Any]:
    """What is kept of a summary (its requests live in the model call cache)."""
    return {"summarizer": summary.summarizer, "text": summary.text,
            "messages": summary.messages, "calls": len(summary.requests),
            "input_tokens": summary.input_tokens, "output_tokens": summary.output_tokens,
            "cost": summary.cost, "details": summary.details}


def keep_summary(store: Store, key: str, instance_id: str, seed_index: int,
                 record: dict[str, Any]) -> None:
    """Keep a summary record under `key` (first writer wins)."""
    summaries.keep(store, key, instance_id, seed_index, record)


def summary_row(store: Store, key: str) -> dict[str, Any] | None:
    """The raw record of a kept summary (for shipping it between stores)."""
    row = summaries.row(store, key)
    return None if row is None else asdict(row)

