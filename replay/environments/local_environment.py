"""An instance's environment on this machine, as the `local` backend (local.py) leases it: its
tree and venv seen at /testbed and /opt/replay-venv, every command contained (sandbox.py) on a
cell layer over the build (layers.py), in the slot's control group when the machine has one.
"""

from __future__ import annotations

import functools
import logging
import os
import shlex
import subprocess
import time
import weakref
from pathlib import Path

from replay.core.errors import EnvironmentFault
from replay.core.paths import BASE_PATH, TESTBED, VENV, home, network_variables
from replay.environments import snapshots
from replay.environments.base import (
    DEFAULT_OUTPUT_LIMIT,
    READ_SCRIPT,
    WRITE_SCRIPT,
    ExecResult,
    ReadCache,
    cap_output,
    check_written,
    inside,
)
from replay.environments.cgroups import ControlGroup, Limits, make_group
from replay.environments.interpreters import uv_binary
from replay.environments.layers import CellLayer
from replay.environments.leases import Lease
from replay.environments.sandbox import SETUP_FAILED, contained_argv
from replay.environments.spool import collect
from replay.records.snapshot import Snapshot

log = logging.getLogger(__name__)
RESTORED_KEPT = 4  # snapshots whose first reads an environment keeps (see `restore`)


class LocalEnvironment:
    """One instance's environment on this machine (see the module docstring)."""

    workdir = TESTBED

    def __init__(self, root: Path, build: Path, base_commit: str, variables: dict[str, str],
                 unroutable: list[str], interpreters: list[str], lease: Lease | None = None,
                 limits: Limits | None = None) -> None:
        self.root = root
        self.build = build
        self.base_commit = base_commit
        self.variables = variables
        self.unroutable = unroutable
        self.interpreters = interpreters  # from the engine's build record, never the venv
        self.lease = lease
        self.limits = limits or Limits()
        self.layer = CellLayer(root / "cell", self.limits.disk)
        # the layer ends with the environment, or with the engine however it ends (holders.py);
        # only the process that made it ends it (a forked child does not hold the lease)
        self._pid = os.getpid()
        self._finalizer = weakref.finalize(self, _close_layer, self.layer, self._pid)
        self.group: ControlGroup | None = None
        self.building = False  # install steps write the build itself
        self.read = ReadCache()
        self.restored: dict[str, ReadCache] = {}  # see `restore`

    def exec(self, command: str, timeout: float = 120.0, network: bool = False,
             env: dict[str, str] | None = None, output_limit: int = DEFAULT_OUTPUT_LIMIT,
             input: bytes | None = None) -> ExecResult:
        """Run `command` with bash in /testbed (see `Environment.exec`)."""
        start = time.monotonic()
        self.read = ReadCache()
        if network or self.building:  # the build changes: no restored state is what it was
            self.restored.clear()
        code, raw, _, timed_out = self._contained(command, timeout, network, env, input,
                                                  output_limit)
        text = raw.decode("utf-8", "replace")
        output, truncated = cap_output(text, output_limit)
        return ExecResult(command=command, exit_code=code, output=output,
                          duration=time.monotonic() - start, timed_out=timed_out,
                          truncated=truncated)

    def _contained(self, command: str, timeout: float, network: bool,
                   env: dict[str, str] | None, stdin: bytes | None,
                   limit: int | None) -> tuple[int, bytes, bytes, bool]:
        """Run `command` contained with `stdin` on its standard input (None: an empty one); its
        exit code, its output (stdout and stderr merged, head and tail kept within about
        4 x `limit` bytes; `limit` None: stdout and stderr apart and whole, for the engine's
        file reads and writes) and whether it timed out."""
        variables = {**self._variables(network), **(env or {})}
        try:
            argv = contained_argv(command, *self._mounts(network), network,
                                  self.unroutable, variables, **self._extras(network, variables))
        except FileNotFoundError as exc:
            raise EnvironmentFault(f"local environment {self.root.name}: {exc}") from None
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if limit is None else subprocess.STDOUT,
            env={}, start_new_session=True)
        code, output, errors, timed_out = collect(process, timeout, stdin, limit)
        if code == SETUP_FAILED and b"replay-namespace-setup-failed" in output + errors:
            why = (output + errors).decode("utf-8", "replace").strip()[-300:]
            raise EnvironmentFault(f"local environment {self.root.name}: {why}")
        if not (network or self.building or self.layer.live):  # no namespaces were entered
            raise EnvironmentFault(f"local environment {self.root.name}: its holder ended")
        return code, output, errors, timed_out

    def _mounts(self, network: bool) -> tuple[Path, Path, list[str]]:
        if network or self.building:
            return self.build / "tree", self.build / "venv", self.interpreters
        return self.layer.merged("tree"), self.layer.merged("venv"), self.interpreters

    def _extras(self, network: bool, variables: dict[str, str]) -> dict[str, object]:
        """What a command mounts besides the system: for install steps uv (read-only), its
        cache, HOME and files that network settings name (a CA bundle, read-only); for every
        other command the cell's namespaces (the overlays over the build mounted there) and the
        slot's control group."""
        if network:
            uv = uv_binary()
            settings = set(network_variables())
            named = [value for name, value in variables.items()
                     if name in settings and os.path.isfile(value)]
            writable = [variables["HOME"], variables["UV_CACHE_DIR"]]
            for path in writable:
                os.makedirs(path, exist_ok=True)
            return {"extra_ro": [uv, *named], "extra_rw": writable}
        if self.building:
            return {}
        holder = self.layer.holder
        if holder is None or not holder.alive:
            raise EnvironmentFault(f"local environment {self.root.name} has no cell layer "
                                   "(closed, or its holder ended)")
        cgroups = self.group.procs if self.group is not None else []
        return {"holder": holder.pid, "cgroups": cgroups}

    def _variables(self, network: bool) -> dict[str, str]:
        variables = {
            "PATH": f"{VENV}/bin:{BASE_PATH}", "VIRTUAL_ENV": VENV, "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8", "TERM": "dumb", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        if network:
            variables |= {"HOME": str(self.build / "home"),
                          "UV_CACHE_DIR": str(home() / "uv-cache"), **network_variables()}
        else:
            variables |= {"HOME": "/tmp", "PIP_NO_INDEX": "1", "UV_OFFLINE": "1"}
        return {**variables, **self.variables}

    def read_file(self, path: str) -> bytes:
        """Bytes of a file in the tree or venv, read inside the sandbox (a link resolves there,
        never on the host). Raises FileNotFoundError otherwise."""
        full = inside(path)
        if full is None:
            raise FileNotFoundError(path)
        known = self.read.get(full)
        if known is not None:
            return known
        code, data, _, _ = self._contained(f"set -- {shlex.quote(full)}; {READ_SCRIPT}", 120,
                                           False, None, None, None)
        if code != 0:
            raise FileNotFoundError(path)
        return self.read.keep(full, data)

    def write_file(self, path: str, data: bytes) -> None:
        """Write a file in the tree or venv inside the sandbox, creating folders. Raises
        PermissionError elsewhere, IsADirectoryError for a folder."""
        full = inside(path)
        if full is None:
            raise PermissionError(f"{path} is outside the environment ({TESTBED}, {VENV})")
        self.read = ReadCache()
        code, _, errors, _ = self._contained(f"set -- {shlex.quote(full)}; {WRITE_SCRIPT}", 120,
                                             False, None, data, None)
        check_written(path, code, errors)

    def reset(self) -> None:
        """Back to the validated build: a new empty cell layer (see layers.py)."""
        self.read = ReadCache()
        if self.group is None:
            self.group = _control_group(self.limits)
        # if the new layer cannot be made, no command runs on the old one (it is gone too)
        self.layer.fresh(self.build, self.unroutable,
                         self.group.folders if self.group is not None else [])

    def snapshot(self) -> Snapshot:
        return snapshots.capture(self, self.base_commit)

    def restore(self, snapshot: Snapshot) -> None:
        """Restore `snapshot` (see `snapshots.restore`). Files read right after a restore,
        before any command, are kept for the next restore of the same snapshot: a restored
        tree is the build with the snapshot's diff applied, fingerprint checked, so a file
        read there reads the same every time (until the build itself changes)."""
        snapshots.restore(self, snapshot)
        if len(self.restored) >= RESTORED_KEPT and snapshot.fingerprint not in self.restored:
            self.restored.pop(next(iter(self.restored)))
        self.read = self.restored.setdefault(snapshot.fingerprint, ReadCache())

    def close(self) -> None:
        """Discard the cell layer, remove the control group and give the slot's lease back;
        the build stays on disk for the next lessee. Once closed, the environment never
        touches the slot again (not when it is collected: the slot's next lessee may have
        made its own layer there)."""
        if not self._finalizer.detach():
            return  # closed before
        if os.getpid() == self._pid:
            self.layer.close()
            if self.group is not None:
                self.group.remove()
        self.group = None
        if self.lease is not None:
            self.lease.release()


def _close_layer(layer: CellLayer, pid: int) -> None:
    if os.getpid() == pid:
        layer.close()


@functools.cache
def _warn_unlimited(why: str) -> None:
    log.warning("the local backend's commands run without memory and process limits: %s", why)


def _control_group(limits: Limits) -> ControlGroup | None:
    try:
        return make_group(limits)
    except EnvironmentFault as fault:
        _warn_unlimited(str(fault))
        return None
