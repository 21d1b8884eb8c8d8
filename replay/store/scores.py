"""The `retention` table: the recurring-detail retention of each POST summary of a run.

All rows of a run are replaced in one transaction, so a reader sees either the previous scores
or the new ones, never a mix. What a score means is `replay.measures`'; here it is only kept.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from replay.store.database import Store


@dataclass(frozen=True)
class ScoreRow:
    """One summary's score: its cell (instance, summarizer, sample), the share of the reference
    it kept (None: an empty reference), how much it kept of how much, the reference's source,
    and the score's full record."""

    instance_id: str
    summarizer: str
    seed_index: int
    share: float | None
    found: int
    size: int
    source: str
    record: dict[str, Any]


def replace(store: Store, run: str, rows: Sequence[ScoreRow]) -> None:
    """Replace run `run`'s scores with `rows`, all in one transaction."""
    now = time.time()
    with store.transaction() as db:
        db.execute("DELETE FROM retention WHERE run=?", (run,))
        db.executemany("INSERT INTO retention VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            (run, row.instance_id, row.summarizer, row.seed_index, row.share, row.found,
             row.size, row.source, json.dumps(row.record), now) for row in rows])


def kept_scores(store: Store, run: str) -> list[dict[str, Any]]:
    """Run `run`'s scores (column -> value, the record left out), by instance, summarizer and
    sample; none when `replay retention` has not scored it."""
    cursor = store.db.execute(
        "SELECT instance_id, summarizer, seed_index, share, found, size, source FROM retention "
        "WHERE run=? ORDER BY instance_id, summarizer, seed_index", (run,))
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def score_record(store: Store, run: str, instance_id: str, summarizer: str,
                 seed_index: int) -> dict[str, Any] | None:
    """The full record of one summary's score, if it was scored."""
    row = store.db.execute(
        "SELECT record FROM retention WHERE run=? AND instance_id=? AND summarizer=? AND "
        "seed_index=?", (run, instance_id, summarizer, seed_index)).fetchone()
    return None if row is None else json.loads(row[0])
