"""Leases: an environment slot's working tree belongs to one process at a time.

Two engine processes (two `replay cell`, two sweeps on one REPLAY_HOME) that used one tree at once
graded each other's edits: one restored its snapshot while the other ran its tests. So a backend
hands a slot out only under a lease: an exclusive `flock` on the slot's lock file
(`<slot folder>.lease`, beside the tree so that rebuilding the tree never removes it), taken
without waiting and held until the environment or its backend is closed. A slot leased elsewhere
is skipped and the next one taken.

Why `flock`:

- the kernel releases it when its holder dies, however it dies (SIGKILL, the OOM killer, a Ray
  worker torn down): a crash never leaves a slot locked, and there are no stale lock files to
  detect, age or remove (the file stays; only the lock held on it means anything);
- it belongs to the open file, not to the process: two backends in one process (the sweep's
  worker threads) exclude each other as two processes do, and closing some other descriptor of
  the file does not drop it, as it would a POSIX record lock (`fcntl`, `lockf`). (On NFS Linux
  emulates it with record locks, which exclude other processes only.)

The lock file also says who holds the slot: the holder writes its host and pid into it when it
takes the lease and empties it when it releases the lease cleanly (on `close`, when the lease is
garbage collected, or at the interpreter's exit for a caller that never closed its backend). A
lease taken on a file that is not empty (`left_by`) follows a holder that died in the slot,
perhaps mid-edit or mid-git (a half-applied diff, a `.git/index.lock`): the backend restores that
tree to the base commit before handing it out.

A lease is valid only in the process that took it: a forked child that inherits the file closes
it without unlocking, which would free the parent's slot.
"""

from __future__ import annotations

import fcntl
import os
import socket
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from replay.core.errors import EnvironmentFault

MAX_SLOTS = 64


def lease_file(root: Path) -> Path:
    """A slot's lease file, beside its folder so that rebuilding the folder keeps it."""
    return root.with_name(root.name + ".lease")


class Lease:
    """An exclusive hold on one slot (see the module docstring)."""

    def __init__(self, path: Path, slot: int, left_by: str, handle: BinaryIO) -> None:
        self.path = path
        self.slot = slot
        self.left_by = left_by
        self._handle = handle
        self._pid = os.getpid()
        self._release = weakref.finalize(self, _give_back, handle, self._pid)

    @property
    def held(self) -> bool:
        """Whether this process holds the slot through this lease."""
        return not self._handle.closed and self._pid == os.getpid()

    def release(self) -> None:
        """Give the slot back, marked clean (once; later calls do nothing)."""
        self._release()


def _give_back(handle: BinaryIO, pid: int) -> None:
    """Empty and unlock a lease's file; a forked child (not `pid`) only closes its copy."""
    if handle.closed:
        return
    if pid == os.getpid():
        handle.truncate(0)
        fcntl.flock(handle, fcntl.LOCK_UN)
    handle.close()


def try_lease(path: Path, slot: int) -> Lease | None:
    """The lease on the lock file `path`, or None when someone else holds it."""
    handle = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644), "r+b",
                       buffering=0)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    left_by = handle.read().decode("utf-8", "replace").strip()
    handle.seek(0)
    handle.truncate()
    handle.write(f"{socket.gethostname()} pid {os.getpid()}\n".encode())
    os.fsync(handle.fileno())
    return Lease(path, slot, left_by, handle)


def lease_first_free(lock_file: Callable[[int], Path], first: int) -> Lease:
    """The lease of the first slot from `first` on that nobody holds (`lock_file(k)` names slot
    k's lock file). Raises `EnvironmentFault` when MAX_SLOTS slots in a row are all held."""
    for slot in range(first, first + MAX_SLOTS):
        lease = try_lease(lock_file(slot), slot)
        if lease is not None:
            return lease
    raise EnvironmentFault(f"slots {first} to {first + MAX_SLOTS - 1} are all in use by other "
                           f"processes or workers (lock files like {lock_file(first)})")
