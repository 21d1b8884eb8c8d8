"""The `retention` table: the recurring-detail retention of each POST summary of a run.

All scores of a run are replaced in one transaction, so a reader sees either the previous
scores or the new ones, never a mix. What a score means is `replay.measures`'; here it is kept
as a `ScoreDetail` and read back as one (`detail`), or as its `KeptScore` (`kept_scores`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from replay.records.retention import FORMAT, SCHEMA, KeptScore, ScoreDetail
from replay.records.stored import stamped, unstamped
from replay.store.database import Store

_DETAIL = ("kept", "missed", "path_forms", "literal_share", "limits", "summary_chars")


def replace(store: Store, run: str, details: Sequence[ScoreDetail]) -> None:
    """Replace run `run`'s scores with `details`, all in one transaction."""
    now = time.time()
    with store._transaction() as db:
        db.execute("DELETE FROM retention WHERE run=?", (run,))
        db.executemany("INSERT INTO retention VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            (run, kept.score.instance_id, kept.score.summarizer, kept.score.seed_index,
             kept.score.share, kept.score.found, kept.score.size, kept.score.source,
             json.dumps(stamped(FORMAT, SCHEMA, _record(kept))), now) for kept in details])


def _record(detail: ScoreDetail) -> dict[str, object]:
    """The score's JSON, as `replay retention` has always written it."""
    score = detail.score
    return {"share": score.share, "literal_share": detail.literal_share, "found": score.found,
            "size": score.size, "path_forms": detail.path_forms, "kept": detail.kept,
            "missed": detail.missed, "limits": detail.limits,
            "reference": {"source": score.source, "size": score.size},
            "summary_chars": detail.summary_chars}


def kept_scores(store: Store, run: str) -> list[KeptScore]:
    """Run `run`'s scores, by instance, summarizer and sample; none when `replay retention`
    has not scored it."""
    return [KeptScore(*row) for row in store._db.execute(
        "SELECT instance_id, summarizer, seed_index, share, found, size, source FROM retention "
        "WHERE run=? ORDER BY instance_id, summarizer, seed_index", (run,))]


def detail(store: Store, run: str, instance_id: str, summarizer: str,
           seed_index: int) -> ScoreDetail | None:
    """What one summary's score kept and missed, if it was scored."""
    row = store._db.execute(
        "SELECT share, found, size, source, record FROM retention WHERE run=? AND "
        "instance_id=? AND summarizer=? AND seed_index=?",
        (run, instance_id, summarizer, seed_index)).fetchone()
    if row is None:
        return None
    _, data = unstamped(json.loads(row[4]))
    score = KeptScore(instance_id, summarizer, seed_index, row[0], row[1], row[2], row[3])
    return ScoreDetail(score, **{name: data[name] for name in _DETAIL if name in data})
