"""Phase A histories: the messages up to a compaction boundary and the tree at that boundary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from replay.errors import InputError
from replay.instances import Instance
from replay.snapshots import Snapshot


class History(BaseModel):
    """Messages in OpenAI chat format (with tool calls), where they stop, and the tree there."""

    instance_id: str
    messages: list[dict[str, Any]]
    boundary: dict[str, Any] = {}
    model: str = ""
    source: str = ""
    snapshot: Snapshot


def load_history_file(path: Path) -> History:
    """Read a history.json whose snapshot diff is a file beside it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        snapshot = data["snapshot"]
        diff_name = snapshot.pop("diff")
        snapshot["diff"] = (path.parent / diff_name).read_bytes()
        return History.model_validate(data)
    except (OSError, KeyError, TypeError, json.JSONDecodeError, ValidationError) as exc:
        raise InputError(f"{path}: not a valid history: {exc}".splitlines()[0]) from None


def bundled_history(instance: Instance) -> History | None:
    """The history that ships with an instance written in this project, if it has one."""
    if instance.repo_files is None:
        return None
    path = instance.repo_files.parent / "history.json"
    if not path.is_file():
        return None
    history = load_history_file(path)
    if history.instance_id != instance.instance_id:
        raise InputError(f"{path}: history is for {history.instance_id}, "
                         f"not {instance.instance_id}")
    return history


def find_history(instance: Instance) -> History:
    """The Phase A history to continue an instance from; a clear error when there is none."""
    history = bundled_history(instance)
    if history is None:
        raise InputError(f"instance {instance.instance_id} has no Phase A history "
                         "(the demo suite ships one per instance)")
    return history
