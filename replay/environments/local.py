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
import hashlib
import json
import logging
import os
import posixpath
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from replay.environments import snapshots
from replay.environments.base import DEFAULT_OUTPUT_LIMIT, ExecResult, cap_output
from replay.environments.interpreters import find_python, uv_binary
from replay.environments.leases import Lease, lease_first_free, try_lease
from replay.environments.recipes import Recipe, recipe_variables
from replay.environments.repos import prepare_repo
from replay.environments.sandbox import check_sandbox, contained_argv, interpreter_prefix
from replay.errors import EnvironmentFault, InputError
from replay.instances.records import Instance
from replay.paths import BASE_PATH, TESTBED, VENV, home, network_variables, within

log = logging.getLogger(__name__)

SETUP_FAILED = 222
READY = "ready.json"


def check_isolation() -> None:
    """The local backend needs root and bubblewrap; say so in one line where it has neither."""
    if os.geteuid() != 0:
        raise InputError("the local backend needs root to contain commands (namespaces); run "
                         "as root or use --backend docker")
    check_sandbox()


def missing_system_packages(packages: list[str]) -> list[str]:
    """The Debian packages of `packages` not installed here (all of them without dpkg)."""
    missing = []
    for package in packages:
        try:
            done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                                  capture_output=True, text=True, timeout=30)
        except OSError:
            return list(packages)
        if "install ok installed" not in done.stdout:
            missing.append(package)
    return missing


class LocalEnvironment:
    """One instance's environment on this machine (see the module docstring)."""

    workdir = TESTBED

    def __init__(self, root: Path, base_commit: str, variables: dict[str, str],
                 unroutable: list[str], lease: Lease | None = None) -> None:
        self.root = root
        self.tree = root / "tree"
        self.venv = root / "venv"
        self.base_commit = base_commit
        self.variables = variables
        self.unroutable = unroutable
        self.lease = lease
        self.interpreters: list[str] = []

    def exec(self, command: str, timeout: float = 120.0, network: bool = False,
             env: dict[str, str] | None = None,
             output_limit: int = DEFAULT_OUTPUT_LIMIT) -> ExecResult:
        """Run `command` with bash in /testbed (see `Environment.exec`)."""
        variables = {**self._variables(network), **(env or {})}
        extra_ro, extra_rw = self._install_paths(variables) if network else ((), ())
        try:
            argv = contained_argv(command, self.tree, self.venv, self._interpreters(), network,
                                  self.unroutable, variables, extra_ro=extra_ro,
                                  extra_rw=extra_rw)
        except FileNotFoundError as exc:
            raise EnvironmentFault(f"local environment {self.root.name}: {exc}") from None
        start = time.monotonic()
        with tempfile.TemporaryFile() as sink:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink,
                                       stderr=subprocess.STDOUT, env={},
                                       start_new_session=True)
            timed_out = False
            try:
                code = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(process.pid, signal.SIGKILL)
                code = process.wait()
            text = _read_capped(sink, output_limit)
        if code < 0:  # killed by a signal: report it as a shell (and docker) does, 128 + N
            code = 128 - code
        if code == SETUP_FAILED and "replay-namespace-setup-failed" in text:
            raise EnvironmentFault(f"local environment {self.root.name}: {text.strip()[-300:]}")
        output, truncated = cap_output(text, output_limit)
        return ExecResult(command=command, exit_code=code, output=output,
                          duration=time.monotonic() - start, timed_out=timed_out,
                          truncated=truncated)

    def _interpreters(self) -> list[str]:
        """The interpreter prefixes the venv's python needs to see (read-only)."""
        found = interpreter_prefix(self.venv)
        return [prefix for prefix in (*self.interpreters, found) if prefix]

    def _install_paths(self, variables: dict[str, str]) -> tuple[list[str], list[str]]:
        """What an install step sees of the host beyond the system: uv (read-only), its cache
        and HOME, and files that network settings name (a CA bundle, read-only)."""
        uv = uv_binary()
        settings = set(network_variables())
        named = [value for name, value in variables.items()
                 if name in settings and os.path.isfile(value)]
        writable = [variables["HOME"], variables["UV_CACHE_DIR"]]
        for path in writable:
            os.makedirs(path, exist_ok=True)
        return [uv, *named], writable

    def _variables(self, network: bool) -> dict[str, str]:
        variables = {
            "PATH": f"{VENV}/bin:{BASE_PATH}", "VIRTUAL_ENV": VENV, "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8", "TERM": "dumb", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        if network:
            variables |= {"HOME": str(self.root / "home"),
                          "UV_CACHE_DIR": str(home() / "uv-cache"), **network_variables()}
        else:
            variables |= {"HOME": "/tmp", "PIP_NO_INDEX": "1", "UV_OFFLINE": "1"}
        return {**variables, **self.variables}

    def host_path(self, path: str) -> Path | None:
        """Where a path inside the environment lives on this machine, if it is ours."""
        path = posixpath.normpath(posixpath.join(self.workdir, path))
        for inside, outside in ((TESTBED, self.tree), (VENV, self.venv)):
            if path == inside or path.startswith(inside + "/"):
                return outside / posixpath.relpath(path, inside)
        return None

    def read_file(self, path: str) -> bytes:
        """Bytes of a file in the tree or venv. Raises FileNotFoundError otherwise."""
        target = self.host_path(path)
        if target is None or not target.is_file():
            raise FileNotFoundError(path)
        return target.read_bytes()

    def write_file(self, path: str, data: bytes) -> None:
        """Write a file in the tree or venv, creating folders. Raises PermissionError elsewhere."""
        target = self.host_path(path)
        if target is None:
            raise PermissionError(f"{path} is outside the environment ({TESTBED}, {VENV})")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def snapshot(self) -> snapshots.Snapshot:
        return snapshots.capture(self, self.base_commit)

    def restore(self, snapshot: snapshots.Snapshot) -> None:
        snapshots.restore(self, snapshot)

    def close(self) -> None:
        """Give the slot's lease back; the tree and venv stay on disk for the next lessee."""
        if self.lease is not None:
            self.lease.release()


def _build_key(instance: Instance, recipe: Recipe) -> str:
    """What a build depends on: the recipe and the base commit (a suite may move an instance's
    base commit; the tree built for the old one must not be reused)."""
    return hashlib.sha256(f"{recipe.digest()}:{instance.base_commit}".encode()).hexdigest()[:12]


def _slot_root(built: Path, slot: int) -> Path:
    """Slot 0 is the build itself; slot k > 0 is a copy beside it."""
    return built if slot == 0 else built.with_name(f"{built.name}.slot{slot}")


def _lock_file(root: Path) -> Path:
    """A slot's lease file, beside its folder so that rebuilding the folder keeps it."""
    return root.with_name(root.name + ".lease")


def _copy(built: Path, root: Path) -> None:
    """Copy the build to `root` through a scratch folder: a copy cut short is never taken for
    a finished one."""
    partial = root.with_name(root.name + ".partial")
    for stale in (partial, root):
        shutil.rmtree(stale, ignore_errors=True)
    subprocess.run(["cp", "-a", str(built), str(partial)], check=True)
    partial.rename(root)


def _reset(env: LocalEnvironment) -> None:
    """Restore a leased tree to the base commit, first removing the lock files git leaves when
    it is killed (no one else runs git in a leased tree)."""
    git = env.tree / ".git"
    for stale in [*git.glob("*.lock"), *(git / "refs").rglob("*.lock")]:
        stale.unlink(missing_ok=True)
    snapshots.restore(env, snapshots.at_base(env, env.base_commit))


def _same_build(built: Path, copy: Path) -> bool:
    """Whether `copy` is a finished copy of the current build at `built`."""
    marker = copy / READY
    return marker.is_file() and marker.read_bytes() == (built / READY).read_bytes()


def _read_capped(sink: object, limit: int) -> str:
    """Read the head and tail of a command's output file without loading a huge one whole."""
    size = sink.tell()  # type: ignore[attr-defined]
    sink.seek(0)  # type: ignore[attr-defined]
    if size <= 4 * limit:
        return sink.read().decode("utf-8", "replace")  # type: ignore[attr-defined]
    head = sink.read(2 * limit)  # type: ignore[attr-defined]
    sink.seek(size - 2 * limit)  # type: ignore[attr-defined]
    tail = sink.read()  # type: ignore[attr-defined]
    return (head + b"\n[...]\n" + tail).decode("utf-8", "replace")


class LocalBackend:
    """Builds local environments once per instance and recipe, reuses them warm, and leases each
    slot's tree to one holder at a time (see leases.py)."""

    name = "local"

    def __init__(self, root: Path | None = None, mirrors: Path | None = None) -> None:
        self.root = root or home() / "envs"
        self.mirrors = mirrors
        self._held: dict[tuple[str, int], LocalEnvironment] = {}

    def start(self, instance: Instance, recipe: Recipe, rebuild: bool = False,
              slot: int = 0) -> LocalEnvironment:
        """The instance's environment in the first slot from `slot` on that nobody else holds,
        leased to this backend until the environment or the backend is closed.

        Slot 0 is the build itself; slot k > 0 is a copy of it, so that k workers (or k
        processes) can run cells of one instance at once. Builds and copies are serialized by a
        lock file. A new copy, and a slot whose last holder died in it, are restored to the base
        commit before use. Asking again for the same slot gives the environment already leased.
        """
        check_isolation()
        if recipe.refusal:
            raise InputError(f"instance {instance.instance_id}: the local backend cannot build "
                             f"its environment: {recipe.refusal}")
        built = within(self.root, f"{instance.instance_id}-{_build_key(instance, recipe)}")
        key = (built.name, slot)
        held = self._held.pop(key, None)
        if held is not None and held.lease is not None and held.lease.held and not rebuild:
            self._held[key] = held
            return held
        if held is not None:
            held.close()
        built.parent.mkdir(parents=True, exist_ok=True)
        lease = lease_first_free(lambda k: _lock_file(_slot_root(built, k)), slot)
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
        """The leased slot, built, copied or restored to the base commit as it needs."""
        root = _slot_root(built, lease.slot)
        with open(built.with_name(built.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            built_now = rebuild or not (built / READY).is_file()
            if built_now:
                self._build_leased(built, lease, instance, recipe)
            copied = lease.slot > 0 and (rebuild or not _same_build(built, root))
            if copied:
                _copy(built, root)
        variables = json.loads((root / READY).read_text())["variables"]
        env = self._environment(root, instance, recipe, variables, lease)
        fresh = copied or (built_now and lease.slot == 0)
        if lease.left_by and not fresh:
            log.warning("%s was left in use by %s, which is gone; restoring it to the base "
                        "commit", root.name, lease.left_by)
        if copied or (lease.left_by and not fresh):
            _reset(env)
        return env

    def _build_leased(self, built: Path, lease: Lease, instance: Instance,
                      recipe: Recipe) -> None:
        """Build slot 0, which every copy is made from, under slot 0's lease: the one being
        started, one this backend holds already, or one taken for the build."""
        if lease.slot == 0 or any(env.root == built and env.lease is not None and env.lease.held
                                  for env in self._held.values()):
            self._build(built, instance, recipe)
            return
        own = try_lease(_lock_file(built), 0)
        if own is None:
            raise EnvironmentFault(f"cannot build {built.name}: its slot 0 is in use by another "
                                   "process or worker; rebuild once it is free")
        try:
            self._build(built, instance, recipe)
        finally:
            own.release()

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
        environment = self._environment(root, instance, recipe, variables)
        seconds = self._install(environment, recipe, python)
        (root / READY).write_text(json.dumps({
            "variables": variables, "python": str(python), "install_seconds": round(seconds, 2),
            "built_at": time.time()}))

    def _environment(self, root: Path, instance: Instance, recipe: Recipe,
                     variables: dict[str, str], lease: Lease | None = None) -> LocalEnvironment:
        return LocalEnvironment(root, instance.base_commit, variables, recipe.unroutable, lease)

    def _install(self, environment: LocalEnvironment, recipe: Recipe, python: Path) -> float:
        start = time.monotonic()
        environment.venv.mkdir()
        environment.interpreters = [str(python.parent.parent)]
        uv = uv_binary()
        steps = [f"{uv} venv -q --seed -p {python} {VENV}"]
        if recipe.packages:
            quoted = " ".join(shlex.quote(package) for package in recipe.packages)
            steps.append(f"{uv} pip install -q --python {VENV}/bin/python {quoted}")
        if recipe.install:
            steps.append(recipe.install)
        for step in steps:
            result = environment.exec(step, timeout=1800, network=True)
            if not result.ok:
                raise EnvironmentFault(f"environment install step failed (exit "
                                       f"{result.exit_code}): {step}\n{result.output[-2000:]}")
        return time.monotonic() - start
