"""Memory and process limits for the local backend's commands: one control group per slot.

Docker bounds a container's memory and processes through control groups; the local backend does
the same for each environment slot: every command of the slot joins the slot's group (from the
sandbox's root set-up step, before bwrap drops its capabilities), so a fork bomb or a runaway
allocation stops at the group's limits instead of the host's. cgroup v2 (a `memory` and `pids`
controller in the unified hierarchy) is used where the host has it, else the v1 `memory` and
`pids` hierarchies, under the engine's own group in each (so a container's engine stays inside
its own limits). A group is made when a slot is leased and removed when it is given back.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from replay.core.errors import EnvironmentFault

log = logging.getLogger(__name__)

ROOT = Path("/sys/fs/cgroup")
REMOVE_TRIES = 100  # 10 ms apart


@dataclass(frozen=True)
class Limits:
    """What one slot's commands may use at once (docker's defaults of this project: 4 GiB of
    memory, 4,096 processes), and the size of the layer a cell writes (its tree and venv)."""

    memory: int = 4 << 30
    pids: int = 4096
    disk: int = 8 << 30


class ControlGroup:
    """A slot's control group: `procs` are the cgroup.procs files a command writes its PID to."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders

    @property
    def procs(self) -> list[str]:
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def remove(self) -> None:
        """Remove the group (its commands are gone: each dies with its sandbox, though the
        kernel may take some milliseconds to let go of the last one's processes)."""
        for folder in self.folders:
            for attempt in range(REMOVE_TRIES):
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    pass
                except OSError as error:
                    if error.errno == errno.EBUSY and attempt + 1 < REMOVE_TRIES:
                        time.sleep(0.01)
                        continue
                    log.warning("cannot remove control group %s: %s", folder, error)
                break


def make_group(limits: Limits) -> ControlGroup:
    """A new control group with `limits`, named for this process (`replay-PID-TOKEN`: two
    engines never share one; the groups of engines that are gone are removed). Raises
    EnvironmentFault where the host has neither cgroup v2 nor the v1 memory and pids
    hierarchies, or refuses to make a group."""
    name = f"replay-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        if _v2_controllers() >= {"memory", "pids"}:
            folder = _fresh(ROOT / _own("") / name) if _own("") != "/" else _fresh(ROOT / name)
            _write(folder / "memory.max", limits.memory)
            _write(folder / "memory.swap.max", 0, optional=True)
            _write(folder / "pids.max", limits.pids)
            return ControlGroup([folder])
        memory = _fresh(ROOT / "memory" / _own("memory").lstrip("/") / name)
        _write(memory / "memory.limit_in_bytes", limits.memory)
        _write(memory / "memory.memsw.limit_in_bytes", limits.memory, optional=True)
        pids = _fresh(ROOT / "pids" / _own("pids").lstrip("/") / name)
        _write(pids / "pids.max", limits.pids)
        return ControlGroup([memory, pids])
    except OSError as error:
        raise EnvironmentFault(f"cannot limit the local backend's commands (control group "
                               f"{name}): {error}") from None


def _v2_controllers() -> set[str]:
    try:
        return set((ROOT / "cgroup.controllers").read_text().split())
    except OSError:
        return set()


def _own(controller: str) -> str:
    """This process's group in the hierarchy of `controller` ("" for v2's unified one)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(",") or (not controller and not names):
            return path or "/"
    raise OSError(f"no {controller or 'unified'} control group in /proc/self/cgroup")


def _fresh(folder: Path) -> Path:
    """`folder` as a new group, after removing the groups that engines now gone left beside it."""
    if folder.parent.is_dir():
        for left in folder.parent.glob("replay-*-*"):
            pid = left.name.split("-")[1]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                with contextlib.suppress(OSError):  # a process still runs in it
                    left.rmdir()
    os.makedirs(folder)
    return folder


def _write(path: Path, value: int, optional: bool = False) -> None:
    try:
        path.write_text(str(value))
    except OSError:
        if not optional:
            raise
