"""The `summaries` table: POST summaries kept by the key of what determines them, and the
summarizer requests a server refused (a record with `refused` and no text).

The record is the JSON the summary stage writes (`replay.sweep.summaries`); the first writer of a
key wins.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from replay.store.database import Store


def record(store: Store, key: str) -> dict[str, Any] | None:
    """The record kept under `key`, if any."""
    row = store.db.execute("SELECT record FROM summaries WHERE key=?", (key,)).fetchone()
    return None if row is None else json.loads(row[0])


def keep(store: Store, key: str, instance_id: str, seed_index: int,
         kept: dict[str, Any]) -> None:
    """Keep a summary's record under `key` (an existing one stays)."""
    store.db.execute("INSERT OR IGNORE INTO summaries VALUES (?, ?, ?, ?, ?, ?)",
                     (key, instance_id, kept["summarizer"], seed_index, json.dumps(kept),
                      time.time()))


@dataclass(frozen=True)
class SummaryRow:
    """A kept summary as it is shipped between stores: its instance, sample and record."""

    instance_id: str
    seed_index: int
    record: dict[str, Any]


def row(store: Store, key: str) -> SummaryRow | None:
    """The row kept under `key`, if any."""
    found = store.db.execute("SELECT instance_id, seed_index, record FROM summaries WHERE key=?",
                             (key,)).fetchone()
    return None if found is None else SummaryRow(found[0], found[1], json.loads(found[2]))
