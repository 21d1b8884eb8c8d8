"""The `local` backend: an instance's tree and venv on this machine, seen at fixed paths.

Every command runs contained (sandbox.py: bubblewrap in its own PID, mount, IPC, user and network
namespaces, no capability, a read-only system, nothing of the host's homes, data or sockets) with
the instance's tree at /testbed and its venv at /opt/replay-venv, so histories that name absolute
paths mean the same thing in every run. Commands other than the environment's own install steps
have loopback only; every command dies with the engine.

An instance is built once per recipe (slot 0) and copied for more slots; each slot's tree is
leased to one backend at a time, in this process or another (see leases.py).
"""

from __future__ import annotations

import fcntl
import functools
import json
import logging
import os
import shlex
import shutil
import subprocess
import time
import weakref
from pathlib import Path
from typing import Any

from replay.core.errors import EnvironmentFault, InputError
from replay.core.files import write_atomic
from replay.core.paths import BASE_PATH, TESTBED, VENV, home, network_variables, within
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
from replay.environments.builds import (
    BUILD_FORMAT,
    READY,
    build_key,
    current,
    missing_system_packages,
)
from replay.environments.cgroups import ControlGroup, Limits, make_group
from replay.environments.interpreters import find_python, uv_binary
from replay.environments.layers import CellLayer
from replay.environments.leases import MAX_SLOTS, Lease, lease_file, lease_first_free, try_lease
from replay.environments.recipes import Recipe, recipe_variables
from replay.environments.repos import prepare_repo
from replay.environments.sandbox import SETUP_FAILED, check_sandbox, contained_argv
from replay.environments.spool import collect
from replay.instances.records import Instance
from replay.records.snapshot import Snapshot

log = logging.getLogger(__name__)

# The venv's modules compiled once, into the build: the cell layer is discarded after every cell,
# so bytecode a test run writes is gone by the next one, and each run compiled pytest and the
# packages it imports again (about 200 ms of a demo instance's 550 ms test run). A module that
# does not compile (a template, Python 2 test data) is left to its source.
BYTECODE_STEP = f"{VENV}/bin/python -m compileall -q -j 0 {VENV}/lib >/dev/null || true"


def check_isolation() -> None:
    """The local backend needs root and bubblewrap; say so in one line where it has neither."""
    if os.geteuid() != 0:
        raise InputError("the local backend needs root to contain commands (namespaces); run "
                         "as root or use --backend docker")
    check_sandbox()


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

    def exec(self, command: str, timeout: float = 120.0, network: bool = False,
             env: dict[str, str] | None = None, output_limit: int = DEFAULT_OUTPUT_LIMIT,
             input: bytes | None = None) -> ExecResult:
        """Run `command` with bash in /testbed (see `Environment.exec`)."""
        start = time.monotonic()
        self.read.clear()
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
        self.read.clear()
        code, _, errors, _ = self._contained(f"set -- {shlex.quote(full)}; {WRITE_SCRIPT}", 120,
                                             False, None, data, None)
        check_written(path, code, errors)

    def reset(self) -> None:
        """Back to the validated build: a new empty cell layer (see layers.py)."""
        self.read.clear()
        if self.group is None:
            self.group = _control_group(self.limits)
        # if the new layer cannot be made, no command runs on the old one (it is gone too)
        self.layer.fresh(self.build, self.unroutable,
                         self.group.folders if self.group is not None else [])

    def snapshot(self) -> Snapshot:
        return snapshots.capture(self, self.base_commit)

    def restore(self, snapshot: Snapshot) -> None:
        snapshots.restore(self, snapshot)

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


def _slot_root(built: Path, slot: int) -> Path:
    """Slot 0 is the build's own folder; slot k > 0 a folder beside it that holds only its
    cell layer (every slot's lower layers are the build)."""
    return built if slot == 0 else built.with_name(f"{built.name}.slot{slot}")


class LocalBackend:
    """Builds local environments once per instance and recipe, reuses them warm, and leases each
    slot's tree to one holder at a time (see leases.py)."""

    name = "local"

    def __init__(self, root: Path | None = None, mirrors: Path | None = None,
                 limits: Limits | None = None) -> None:
        self.root = root or home() / "envs"
        self.mirrors = mirrors
        self.limits = limits or Limits()
        self._held: dict[tuple[str, int], LocalEnvironment] = {}

    def start(self, instance: Instance, recipe: Recipe, rebuild: bool = False,
              slot: int = 0) -> LocalEnvironment:
        """The instance's environment in the first slot from `slot` on that nobody else holds,
        leased to this backend until the environment or the backend is closed.

        Slot k gives k workers (or k processes) cells of one instance at once: every slot sees
        the one build (built once, under a lock file) through its own cell layer, empty when the
        slot is handed out, whoever held it last. Asking again for the same slot gives the
        environment already leased.
        """
        check_isolation()
        if recipe.refusal:
            raise InputError(f"instance {instance.instance_id}: the local backend cannot build "
                             f"its environment: {recipe.refusal}")
        built = within(self.root, f"{instance.instance_id}-{build_key(instance, recipe)}")
        key = (built.name, slot)
        held = self._held.pop(key, None)
        if held is not None and held.lease is not None and held.lease.held and not rebuild:
            self._held[key] = held
            return held
        if held is not None:
            held.close()
        built.parent.mkdir(parents=True, exist_ok=True)
        lease = lease_first_free(lambda k: lease_file(_slot_root(built, k)), slot)
        try:
            env = self._prepare(built, lease, instance, recipe, rebuild)
        except BaseException:
            lease.release()
            raise
        self._held[key] = env
        return env

    def close(self) -> None:
        """Give back every slot this backend leased (environments stay built on disk)."""
        held, self._held = list(self._held.values()), {}
        for env in held:
            env.close()

    def _prepare(self, built: Path, lease: Lease, instance: Instance, recipe: Recipe,
                 rebuild: bool) -> LocalEnvironment:
        """The leased slot over the build (built first when it must be), reset to it."""
        root = _slot_root(built, lease.slot)
        with open(built.with_name(built.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if rebuild or not current(built):
                self._build_leased(built, lease, instance, recipe)
        record = json.loads((built / READY).read_text())
        if lease.left_by:
            log.warning("%s was left in use by %s, which is gone; its cell layer is discarded",
                        root.name, lease.left_by)
        env = self._environment(root, built, instance, recipe, record, lease)
        env.reset()
        return env

    def _build_leased(self, built: Path, lease: Lease, instance: Instance,
                      recipe: Recipe) -> None:
        """Build the instance, under the lease of every slot: no one else may see the build
        change under their cell layer."""
        others = []
        try:
            for slot in range(MAX_SLOTS):
                lock = lease_file(_slot_root(built, slot))
                if slot == lease.slot or not lock.exists() or self._holds(built, slot):
                    continue
                other = try_lease(lock, slot)
                if other is None:
                    raise EnvironmentFault(f"cannot build {built.name}: its slot {slot} is in "
                                           "use by another process or worker; rebuild once it "
                                           "is free")
                others.append(other)
            self._build(built, instance, recipe)
        finally:
            for other in others:
                other.release()

    def _holds(self, built: Path, slot: int) -> bool:
        return any(env.build == built and env.lease is not None and env.lease.held
                   and env.lease.slot == slot for env in self._held.values())

    def _build(self, root: Path, instance: Instance, recipe: Recipe) -> None:
        # the interpreter itself, not a venv's link to it (uv may find replay's own venv): the
        # sandbox shows only the interpreter's prefix
        python = find_python(recipe.python).resolve()
        missing = missing_system_packages(recipe.apt)
        if missing:
            log.warning("%s: the recipe names system packages this machine lacks (tests that "
                        "need them may fail or skip): apt-get install %s", instance.instance_id,
                        " ".join(missing))
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        prepare_repo(instance, root / "tree", self.mirrors)
        variables = recipe_variables(recipe, instance, self.mirrors)
        record = {"variables": variables, "python": str(python)}
        environment = self._environment(root, root, instance, recipe, record)
        seconds = self._install(environment, recipe, python)
        write_atomic(root / READY, json.dumps({
            **record, "install_seconds": round(seconds, 2), "built_at": time.time(),
            "format": BUILD_FORMAT}))

    def _environment(self, root: Path, build: Path, instance: Instance, recipe: Recipe,
                     record: dict[str, Any], lease: Lease | None = None) -> LocalEnvironment:
        """The environment of slot `root` over `build`; the interpreter's prefix comes from the
        engine's build record (never from the venv's writable pyvenv.cfg)."""
        prefix = str(Path(record["python"]).parent.parent)
        return LocalEnvironment(root, build, instance.base_commit, record["variables"],
                                recipe.unroutable, [prefix], lease, self.limits)

    def _install(self, environment: LocalEnvironment, recipe: Recipe, python: Path) -> float:
        start = time.monotonic()
        (environment.build / "venv").mkdir()
        uv = uv_binary()
        steps = [f"{uv} venv -q --seed -p {python} {VENV}"]
        if recipe.packages:
            quoted = " ".join(shlex.quote(package) for package in recipe.packages)
            steps.append(f"{uv} pip install -q --python {VENV}/bin/python {quoted}")
        if recipe.install:
            steps.append(recipe.install)
        steps.append(BYTECODE_STEP)
        for step in steps:
            result = environment.exec(step, timeout=1800, network=True)
            if not result.ok:
                raise EnvironmentFault(f"environment install step failed (exit "
                                       f"{result.exit_code}): {step}\n{result.output[-2000:]}")
        return time.monotonic() - start
