"""What the environment benches share: a snapshot with the gold patch applied, timed restores."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

UNTRACKED = "echo 'print(42)' > reproduce_bug.py"


def seconds(action: Callable[[], object], runs: int) -> list[float]:
    """The seconds `action` took in each of `runs` runs."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return times


def fixed_snapshot(env: Any, instance: Any, untracked: str = UNTRACKED) -> Any:
    """The snapshot of `instance` at its base commit with its gold patch applied and the
    untracked files `untracked` (a command) writes."""
    from replay.api.blocks import apply_patch, at_base

    env.restore(at_base(env, instance.base_commit))
    apply_patch(env, instance.patch, "gold patch", instance)
    env.exec(untracked)
    return env.snapshot()


def restore_seconds(env: Any, snapshot: Any, runs: int, dirty: str) -> list[float]:
    """The seconds of each of `runs` restores of `snapshot`, every other one after the command
    `dirty` changed the tree (not timed)."""
    times = []
    for index in range(runs):
        if index % 2:
            env.exec(dirty)
        times.extend(seconds(lambda: env.restore(snapshot), 1))
    return times
