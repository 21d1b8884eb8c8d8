"""Recorded trajectories: every message of a Phase A run and the working tree after every step.

A trajectory is collected once (by running the agent) or imported once (by executing a recorded
trajectory's actions); after that it is only read. Any step can become a boundary: a history is
the messages up to the end of step k and the snapshot taken after step k, so cutting several
boundaries from one trajectory runs nothing again.

Stored as a row of the `trajectories` table, `trajectories/<key>/trajectory.json` and one
content-addressed diff per distinct tree, `snapshots/<sha256>.diff`, under the artifacts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from replay.core.digest import sha256_hex
from replay.core.errors import InputError
from replay.environments.base import Environment
from replay.histories.boundaries import Rule, StepMark, cut
from replay.histories.records import history_row, write_history_files
from replay.models.types import Message
from replay.records.history import Boundary, History
from replay.records.snapshot import Snapshot
from replay.store import Store
from replay.store import histories as stored
from replay.store.artifacts import TRAJECTORIES, keyed, snapshot_diff
from replay.store.histories import TrajectoryRow, has_history

TRAJECTORY_FILE = "trajectory.json"
STORED = {"dialect": "protocol"}  # a field -> its key in trajectory.json (from before a rename)
READ = {stored: name for name, stored in STORED.items()}


@dataclass
class Step:
    """One step: where its messages end, the context after it, and the tree after it."""

    end: int
    context_tokens: int
    tokens_estimated: bool
    fingerprint: str
    diff: bytes = field(repr=False)
    edited: list[str] = field(default_factory=list)
    divergences: list[str] = field(default_factory=list)


@dataclass
class Trajectory:
    """A complete Phase A run of one instance, from the task to its last step."""

    key: str
    instance_id: str
    base_commit: str
    model: str
    source: str
    messages: list[Message]
    opening_tokens: int
    steps: list[Step]
    exit_reason: str
    resolved: bool | None
    dialect: str = "tool-calls"

    @property
    def divergences(self) -> list[str]:
        """Every recorded output that differed from execution (imports only), step by step."""
        return [text for step in self.steps for text in step.divergences]

    def marks(self) -> list[StepMark]:
        """What the boundary rules see of each step."""
        return [StepMark(step.context_tokens, tuple(step.edited)) for step in self.steps]

    def history(self, rule: Rule) -> History:
        """The history this trajectory gives under `rule`; bad input past the end."""
        try:
            count = cut(rule, self.marks(), self.opening_tokens)
        except InputError as exc:
            raise InputError(f"{self.instance_id}: {exc}") from None
        step = self.steps[count - 1]
        snapshot = Snapshot(base_commit=self.base_commit, diff=step.diff,
                            fingerprint=step.fingerprint)
        boundary = Boundary(rule=rule.text, step=count, tokens=step.context_tokens,
                            tokens_estimated=step.tokens_estimated, steps_total=len(self.steps))
        return History(instance_id=self.instance_id, messages=self.messages[:step.end],
                       boundary=boundary, model=self.model, source=self.source,
                       snapshot=snapshot, resolved=self.resolved, trajectory=self.key,
                       divergences=[text for s in self.steps[:count] for text in s.divergences],
                       dialect=self.dialect)


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
    tokens are set once the whole run is known (`set_context_tokens`)."""
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


def set_context_tokens(steps: list[Step], requests: Sequence[int | None],
                       messages: list[Message]) -> None:
    """Set each step's context tokens (see `context_tokens`)."""
    counted = context_tokens([step.end for step in steps], requests, messages)
    for step, (tokens, estimated) in zip(steps, counted, strict=True):
        step.context_tokens, step.tokens_estimated = tokens, estimated


def write_trajectory_files(store: Store, trajectory: Trajectory) -> str:
    """Write a trajectory's files under the artifacts; return its path relative to them."""
    steps = []
    for step in trajectory.steps:
        digest = sha256_hex(step.diff)
        if not store.artifact_path(*snapshot_diff(digest)).is_file():
            store.write_artifact(step.diff, *snapshot_diff(digest))
        record = asdict(step)
        record["diff"] = digest
        steps.append(record)
    data = {STORED.get(name, name): value for name, value in asdict(trajectory).items()}
    data["steps"] = steps
    folder = keyed(TRAJECTORIES, trajectory.key)
    store.write_artifact(json.dumps(data, indent=1, ensure_ascii=False).encode(), *folder,
                         TRAJECTORY_FILE)
    return "/".join(folder)


def trajectory_row(trajectory: Trajectory, path: str) -> TrajectoryRow:
    """The store's row of a trajectory whose files are in `path`."""
    return TrajectoryRow(trajectory.key, trajectory.instance_id, trajectory.model,
                         trajectory.source, len(trajectory.steps), trajectory.exit_reason,
                         trajectory.resolved, len(trajectory.divergences), path)


def load_trajectory(store: Store, key: str) -> Trajectory | None:
    """The stored trajectory with this key, or None if there is none (or its files are gone)."""
    path = stored.trajectory_path(store, key)
    if path is None:
        return None
    folder = store.artifact_path(*path.split("/"))
    try:
        data = json.loads((folder / TRAJECTORY_FILE).read_text(encoding="utf-8"))
        steps = [Step(**{**step, "diff": store.artifact_path(
            *snapshot_diff(step["diff"])).read_bytes()}) for step in data.pop("steps")]
    except (OSError, json.JSONDecodeError):
        return None
    return Trajectory(**{READ.get(name, name): value for name, value in data.items()},
                      steps=steps)


def keep(store: Store, histories: Sequence[History],
         trajectories: Sequence[Trajectory] = ()) -> set[str]:
    """Store trajectories and histories: files first, then every row in one transaction.

    Returns the ids of the histories that were not in the store before.
    """
    written = [(trajectory, write_trajectory_files(store, trajectory))
               for trajectory in trajectories]
    fresh = {history.content_id(): history for history in histories
             if not has_history(store, history.content_id())}
    files = [(history, write_history_files(store, history)) for history in fresh.values()]
    stored.keep(store, [trajectory_row(trajectory, path) for trajectory, path in written],
                [history_row(history, path) for history, path in files])
    return set(fresh)
