"""The outcome of each recipe check, kept as `recipes/check/ID.json` under the artifacts, so a
check cut short and run again finds what it checked before (`replay.judge.coverage`)."""

from __future__ import annotations

import json
from dataclasses import asdict

from replay.records.recipe_check import FORMAT, SCHEMA, RowCheck
from replay.records.stored import stamped, unstamped
from replay.store.database import Store


def _parts(instance_id: str) -> tuple[str, str, str]:
    return ("recipes", "check", f"{instance_id}.json")


def keep(store: Store, outcome: RowCheck) -> None:
    """Keep the outcome of checking one row (replacing the one it had)."""
    store._write_artifact(json.dumps(stamped(FORMAT, SCHEMA, asdict(outcome))).encode(),
                          *_parts(outcome.instance_id))


def find(store: Store, instance_id: str) -> RowCheck | None:
    """The outcome kept for the row `instance_id`, if it was checked."""
    path = store._artifact_path(*_parts(instance_id))
    if not path.is_file():
        return None
    return RowCheck(**unstamped(json.loads(path.read_text(encoding="utf-8")))[1])
