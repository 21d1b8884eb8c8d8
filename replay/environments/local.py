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
import json
import logging
import os
import shlex
import shutil
import time
from pathlib import Path
from typing import Any

from replay.core.errors import EnvironmentFault, InputError
from replay.core.files import write_atomic
from replay.core.paths import VENV, home, within
from replay.environments.builds import (
    BUILD_FORMAT,
    READY,
    build_key,
    current,
    missing_system_packages,
)
from replay.environments.cgroups import Limits
from replay.environments.interpreters import find_python, uv_binary
from replay.environments.leases import MAX_SLOTS, Lease, lease_file, lease_first_free, try_lease
from replay.environments.local_environment import LocalEnvironment
from replay.environments.recipes import Recipe, recipe_variables
from replay.environments.repos import prepare_repo
from replay.environments.sandbox import check_sandbox
from replay.instances.records import Instance

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
