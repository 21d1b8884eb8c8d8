"""The process that holds a cell's namespaces: made with its cell layer, gone with it.

The engine starts a holder per fresh cell layer with `unshare --mount --net`. In its new mount
namespace (private: nothing mounted there reaches the host, nor what the host mounts later) the
holder mounts the layer's tmpfs and the overlays of the tree and the venv on it; in its new
network namespace it brings loopback up and routes the unroutable addresses into a black hole
(sandbox.ROOT_SETUP). Then it says `ready` and waits. Every command of the cell enters its
namespaces (`nsenter --target PID`). Nothing is bound to a file, so this works whatever
namespaces the engine itself runs in: binding a namespace's file fails from inside a container
on kernels that hand out mount namespace ids per CPU (6.18), depending on which CPU made which.

A holder lives as long as its layer: the engine kills it when the layer is replaced or released,
and it ends by itself when the engine ends however it ends, SIGKILL included (its standard input
is a pipe whose only writer is the engine: its `read` then meets end of file). Then it kills
what is left in the slot's control groups (the cell's commands die with the engine anyway) and
removes them. With the holder gone no process is left in its namespaces, and the kernel frees
them: the layer and its overlays are unmounted, the tmpfs's memory given back. A killed engine
leaves nothing mounted, running or grouped on the host.

The holder's PID is safe to enter while the holder runs: the engine is its parent and reaps it
only when it kills it (or finds it gone), so the PID cannot name another process meanwhile.
"""

from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from replay.core.errors import EnvironmentFault
from replay.environments.sandbox import Overlay, programs, root_script, setup_options

READY = b"ready\n"

# Runs once the namespaces are set up. $1 is `sleep`, $2 `rmdir`, then the control groups' folders.
HOLD = r"""
echo ready
exec >/dev/null 2>&1
while read -r _; do :; done
sleep=$1; rmdir=$2; shift 2
for group; do
    echo 1 > "$group/cgroup.kill"
    tries=0
    until "$rmdir" "$group" || [ ! -d "$group" ] || [ $tries -ge 100 ]; do
        "$sleep" 0.05; tries=$((tries + 1))
    done
done
"""


class Holder:
    """A running holder (see the module docstring)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def seen(self, path: Path) -> Path:
        """Where the engine reads `path` as the holder's mount namespace shows it."""
        return Path(f"/proc/{self.pid}/root") / path.relative_to("/")

    def kill(self) -> None:
        """End the holder, and with it the cell's namespaces and layer."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        if self.process.stdin is not None:
            self.process.stdin.close()


def hold(folder: Path, size: int, overlays: Sequence[Overlay], unroutable: Sequence[str],
         groups: Sequence[Path] = (), engine_pid: int | None = None) -> Holder:
    """A new holder of a cell's namespaces, with a tmpfs of `size` bytes at `folder` and
    `overlays` on it, loopback up and `unroutable` routed into a black hole; when the engine
    ends it removes the control groups `groups`. Raises EnvironmentFault when it cannot be made."""
    tools = programs()
    engine_pid = os.getpid() if engine_pid is None else engine_pid
    argv = [tools["unshare"], "--mount", "--net", "--propagation", "private", "--",
            *root_script(tools, engine_pid),
            *setup_options((), overlays, unroutable, (size, folder)),
            tools["sh"], "-c", HOLD, "replay-holder", tools["sleep"], tools["rmdir"],
            *(str(group) for group in groups)]
    try:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env={}, cwd="/",
                                   start_new_session=True)  # no Ctrl-C of the terminal's
    except OSError as error:
        raise EnvironmentFault(f"cannot make a cell's namespaces: {error}") from None
    holder = Holder(process)
    stdout, stderr = process.stdout, process.stderr
    assert stdout is not None and stderr is not None  # piped above
    if _ready(stdout, 60):
        stdout.close()
        stderr.close()
        return holder
    holder.kill()
    why = stderr.read().decode("utf-8", "replace").strip()[-300:]
    stderr.close()
    raise EnvironmentFault(f"cannot make a cell's namespaces (exit {process.returncode}): "
                           f"{why or 'no answer in 60 s'}")


def _ready(stdout: IO[bytes], timeout: float) -> bool:
    """Whether the holder says it is ready within `timeout` seconds."""
    poller = select.poll()
    poller.register(stdout, select.POLLIN)
    return bool(poller.poll(timeout * 1000)) and stdout.readline() == READY
