"""Phase A histories: the messages up to a compaction boundary and the tree at that boundary.

A history ships with an instance of a bundled suite (`history.json` + `snapshot.diff` in the
instance's folder of the suite, `Instance.bundle`: beside a demo's repository, or alone for a
dataset-backed suite such as compact-bench), or is cut from a collected or imported trajectory
and kept in the store (`replay.store.histories`). Stored histories are
content-addressed: the id is the sha256 of the messages, the snapshot fingerprint and the
boundary rule, so cutting the same history again finds the one already there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from replay.core.errors import InputError
from replay.instances.records import Instance
from replay.records.history import DIFF_FILE, HISTORY_FILE, History, from_record, history_record
from replay.records.snapshot import Snapshot
from replay.store import Store
from replay.store.histories import StoredHistory, load_history, stored_histories

__all__ = ["DIFF_FILE", "HISTORY_FILE", "bundled_history", "bundled_snapshot", "find_history",
           "history_record", "load_history_file"]  # the file's names, for suites and scripts



def load_history_file(path: Path) -> History:
    """Read a history.json whose snapshot diff is a file beside it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return from_record(data, (path.parent / data["snapshot"]["diff"]).read_bytes())
    except (OSError, KeyError, TypeError, json.JSONDecodeError, ValidationError) as exc:
        raise InputError(f"{path}: not a valid history: {exc}".splitlines()[0]) from None


def bundled_history(instance: Instance) -> History | None:
    """The history that ships with an instance in its suite's folder, if it has one."""
    if instance.bundle is None:
        return None
    path = instance.bundle / HISTORY_FILE
    if not path.is_file():
        return None
    history = load_history_file(path)
    if history.instance_id != instance.instance_id:
        raise InputError(f"{path}: history is for {history.instance_id}, "
                         f"not {instance.instance_id}")
    return history


def bundled_snapshot(instance: Instance) -> Snapshot | None:
    """The snapshot of the instance's bundled history, if it has one (for validation)."""
    history = bundled_history(instance)
    return None if history is None else history.snapshot


def find_history(instance: Instance, *, store: Store | None = None,
                 history_id: str | None = None, rule: str | None = None) -> History:
    """The Phase A history to continue an instance from; a clear error when there is none.

    With neither `history_id` nor `rule`, the history bundled with the instance comes first;
    otherwise (and always with a store and an id or rule) the store's histories of the instance
    are searched: an id (or a prefix of one) picks one, a rule narrows them, and more than one
    match is refused with their ids rather than chosen silently.
    """
    if history_id is None and rule is None:
        bundled = bundled_history(instance)
        if bundled is not None:
            return bundled
    if store is None:
        raise InputError(f"instance {instance.instance_id} has no Phase A history "
                         "(the demo suite ships one per instance; `replay collect` or "
                         "`replay import` make others)")
    rows = stored_histories(store, instance.instance_id, rule)
    if history_id is not None:
        rows = [row for row in rows if row.id.startswith(history_id)]
    return load_history(store, _one(instance, rows, history_id, rule).id)


def _one(instance: Instance, rows: Sequence[StoredHistory], history_id: str | None,
         rule: str | None) -> StoredHistory:
    wanted = " and ".join(part for part in (
        f"id {history_id}" if history_id else "", f"rule {rule}" if rule else "") if part)
    what = f"instance {instance.instance_id}" + (f" with {wanted}" if wanted else "")
    if not rows:
        raise InputError(f"no stored Phase A history for {what} "
                         "(make one with `replay collect` or `replay import`)")
    if len(rows) > 1:
        ids = ", ".join(f"{row.id[:12]} ({row.rule}, {row.model})" for row in rows)
        raise InputError(f"{len(rows)} stored histories for {what}: {ids}; choose one by id")
    return rows[0]
