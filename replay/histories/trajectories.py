"""Recorded trajectories: every message of a Phase A run and the working tree after every step.

A trajectory is collected once (by running the agent) or imported once (by executing a recorded
trajectory's actions); after that it is only read. Any step can become a boundary: a history is
the messages up to the end of step k and the snapshot taken after step k, so cutting several
boundaries from one trajectory runs nothing again.

The records are `replay.records.trajectory`'s; the store keeps them (`replay.store.histories`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace

from replay.core.errors import InputError
from replay.environments.base import Environment
from replay.histories.boundaries import Rule, StepMark, cut
from replay.models.types import Message
from replay.records.history import History
from replay.records.trajectory import Step, Trajectory


def cut_history(trajectory: Trajectory, rule: Rule) -> History:
    """The history `trajectory` gives under `rule`; bad input past the end."""
    try:
        count = cut(rule, marks(trajectory), trajectory.opening_tokens)
    except InputError as exc:
        raise InputError(f"{trajectory.instance_id}: {exc}") from None
    return trajectory.history_at(count, rule.text)


def marks(trajectory: Trajectory) -> list[StepMark]:
    """What the boundary rules see of each step."""
    return [StepMark(step.context_tokens, tuple(step.edited)) for step in trajectory.steps]


def estimate_tokens(messages: list[Message]) -> int:
    """A token count for messages whose request recorded none: four characters a token."""
    return max(1, len(json.dumps(messages, ensure_ascii=False)) // 4)


def diff_blocks(diff: bytes) -> dict[str, bytes]:
    """A snapshot diff split per file: path -> that file's part of the diff."""
    blocks: dict[str, bytes] = {}
    for block in re.split(rb"(?m)^(?=diff --git )", diff):
        match = re.match(rb"diff --git a/(\S+) b/(\S+)", block)
        if match:
            blocks[match.group(2).decode("utf-8", "replace")] = block
    return blocks


def edited_files(before: bytes, after: bytes) -> list[str]:
    """Files of the base commit whose content differs between two snapshot diffs."""
    old, new = diff_blocks(before), diff_blocks(after)
    changed = sorted(path for path in old.keys() | new.keys() if old.get(path) != new.get(path))
    return [path for path in changed
            if b"\nnew file mode" not in (new.get(path) or old.get(path) or b"").split(b"@@")[0]]


def record_step(env: Environment, end: int, previous_diff: bytes,
                divergences: Sequence[str] = ()) -> Step:
    """The tree after one step, snapshotted, with the files the step edited. Its context
    tokens are known once the whole run is (`with_context_tokens`)."""
    snapshot = env.snapshot()
    return Step(end=end, context_tokens=0, tokens_estimated=False,
                fingerprint=snapshot.fingerprint, diff=snapshot.diff,
                edited=edited_files(previous_diff, snapshot.diff), divergences=list(divergences))


def context_tokens(ends: Sequence[int], requests: Sequence[int | None],
                   messages: list[Message]) -> list[tuple[int, bool]]:
    """Each step's context and whether it is estimated: the input tokens of the request that
    followed it, estimated from the messages where there was none (after the last step) or
    none was reported. `ends[i]`: where step i's messages end."""
    found = []
    for index, end in enumerate(ends):
        following = requests[index + 1] if index + 1 < len(requests) else None
        found.append((following or estimate_tokens(messages[:end]), not following))
    return found


def with_context_tokens(steps: Sequence[Step], requests: Sequence[int | None],
                        messages: list[Message]) -> list[Step]:
    """The steps with their context tokens (see `context_tokens`)."""
    counted = context_tokens([step.end for step in steps], requests, messages)
    return [replace(step, context_tokens=tokens, tokens_estimated=estimated)
            for step, (tokens, estimated) in zip(steps, counted, strict=True)]
