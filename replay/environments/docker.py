"""The `docker` backend: an instance's tree and venv in a container, at the same paths as `local`.

The repository is at /testbed and the venv at /opt/replay-venv (anonymous volumes, filled from
the instance's image; see docker_images.py), so histories and scripts mean the same thing on
either backend. A container runs with no network, no capability and no-new-privileges, CPU,
memory and process limits, and a read-only root; each command gets an empty /tmp, runs in
/testbed, and is killed with its whole process group on timeout, as on `local`. Unroutable
addresses of the recipe are routed into a black hole on loopback once per container, by the
engine from the host with `nsenter` (the container itself never holds CAP_NET_ADMIN).

One container per instance and slot is kept warm and reused by the commands of a cell; `reset`
(each restore: before a continuation and before its tests) replaces it by a new one from the
instance's image, so the tree with `.git/` and ignored files, the venv and /tmp are exactly the
image's again and no process of an earlier cell survives. Within a cell, nothing outlives its
command either: when a command returns, every process it left (a `setsid nohup` daemon
included) is killed, all but the container's init and its `sleep`.

A container belongs to the process that created it: `start` creates it with that process as
its `replay.owner`, only that backend ever hands it out (it never adopts a container
it finds), and its /testbed and venv are anonymous volumes of its own, so two processes never
share a container or a tree and need no lease (local slots do: leases.py).

Containers are removed by `close()` (on normal exit and on Ctrl-C, by the command line); those of
a process that died (SIGKILL, a crash) by the next docker backend to start, or by `replay clean`.
A container that vanishes mid-cell makes `exec` raise `EnvironmentFault`; the next `start`
creates a new one.
"""

from __future__ import annotations

import io
import logging
import posixpath
import shlex
import subprocess
import tarfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
import requests.exceptions
from docker.types import Mount

from replay.environments import snapshots
from replay.environments.base import DEFAULT_OUTPUT_LIMIT, ExecResult, cap_output
from replay.environments.docker_engine import (
    connect,
    gone,
    labels,
    remove_containers,
    remove_orphans,
    run,
)
from replay.environments.docker_images import ImageBuilder
from replay.environments.recipes import Recipe, recipe_variables
from replay.errors import EnvironmentFault
from replay.instances.records import Instance
from replay.paths import BASE_PATH, TESTBED, VENV

log = logging.getLogger(__name__)

DEFAULT_BASE_IMAGE = "replay-base:bookworm"
KILLED = 137
STOP_PATIENCE = 2.0
SYMLINK = 1 << 27
DIRECTORY = 1 << 31
# $1 = timeout in seconds, $2 = the command. `set -m` gives the command its own process group
# (without ignoring SIGINT, as a plain `&` would), killed whole on timeout and when it returns.
EXEC_SCRIPT = """\
find /tmp -mindepth 1 -delete 2>/dev/null
set -m
timeout -s KILL "$1" bash -c "$2" 2>&1 &
pid=$!
wait "$pid"
code=$?
kill -KILL -- "-$pid" 2>/dev/null
# $3: the container's own processes (init and its sleep); every other one is what the command
# left behind (a daemon that escaped its process group with setsid): kill it, until none is left
for round in 1 2 3 4; do
    left=0
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        case " $3 $$ " in *" $p "*) ;; *) kill -KILL "$p" 2>/dev/null && left=1 ;; esac
    done
    [ "$left" = 0 ] && break
done
exit "$code"
"""


def command_variables(variables: dict[str, str]) -> dict[str, str]:
    """The environment of agent and test commands: that of the local backend without network."""
    return {
        "PATH": f"{VENV}/bin:{BASE_PATH}", "VIRTUAL_ENV": VENV, "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8", "TERM": "dumb", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/tmp", "PIP_NO_INDEX": "1", "UV_OFFLINE": "1",
        **variables,
    }


def _inside(path: str) -> str | None:
    """The absolute form of a path in the tree or the venv, or None for any other path."""
    full = posixpath.normpath(posixpath.join(TESTBED, path))
    for root in (TESTBED, VENV):
        if full == root or full.startswith(root + "/"):
            return full
    return None


class DockerEnvironment:
    """One instance's warm container (see the module docstring)."""

    workdir = TESTBED

    def __init__(self, client: docker.DockerClient, create: Callable[[], tuple[str, str]],
                 image: str, base_commit: str) -> None:
        self.client = client
        self.create = create  # a new container from the image: its id and the PIDs to keep
        self.container_id, self.keep = create()
        self.image = image
        self.base_commit = base_commit
        self.closed = False

    def exec(self, command: str, timeout: float = 120.0, network: bool = False,
             env: dict[str, str] | None = None,
             output_limit: int = DEFAULT_OUTPUT_LIMIT) -> ExecResult:
        """Run `command` with bash in /testbed (see `Environment.exec`).

        Raises `EnvironmentFault` when the container is gone, or when network is asked for:
        a docker environment's network exists only while its image is built.
        """
        if network:
            raise EnvironmentFault("docker environments have no network once built; install "
                                   "steps belong in the recipe, which runs them at build time")
        if self.closed:
            raise EnvironmentFault(f"docker container {self.container_id[:12]} was closed")
        start = time.monotonic()
        done = run(self.client, self.container_id,
                   ["bash", "-c", EXEC_SCRIPT, "replay-exec", f"{timeout:.3f}", command,
                    self.keep],
                   env or {}, TESTBED, output_limit)
        duration = time.monotonic() - start
        code = KILLED if done.exit_code is None else done.exit_code
        timed_out = code == KILLED and duration >= timeout
        if code == KILLED or code < 0:
            why = self._stopped(patience=0.0 if timed_out else STOP_PATIENCE)
            if why is not None:
                raise EnvironmentFault(f"docker container {self.container_id[:12]} stopped "
                                       f"during a command: {why}")
        output, cut = cap_output(done.output.decode("utf-8", "replace"), output_limit)
        return ExecResult(command=command, exit_code=code, output=output, duration=duration,
                          timed_out=timed_out, truncated=cut or done.truncated)

    def read_file(self, path: str) -> bytes:
        """Bytes of a file in the tree or venv. Raises FileNotFoundError otherwise."""
        full = _inside(path)
        for _ in range(8):
            if full is None:
                break
            try:
                stream, stat = self.client.api.get_archive(self.container_id, full)
            except (docker.errors.DockerException, requests.exceptions.RequestException):
                self._check_alive()
                break
            if stat["mode"] & SYMLINK:
                full = posixpath.normpath(posixpath.join(posixpath.dirname(full),
                                                         stat["linkTarget"]))
                continue
            if stat["mode"] & DIRECTORY:
                break
            with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
                member = archive.extractfile(archive.next())  # type: ignore[arg-type]
                if member is None:
                    break
                return member.read()
        raise FileNotFoundError(path)

    def write_file(self, path: str, data: bytes) -> None:
        """Write a file in the tree or venv, creating folders. Raises PermissionError elsewhere.

        The bytes are staged under /testbed/.git and copied with `cat`, so an existing file
        keeps its mode, as on the local backend.
        """
        full = _inside(path)
        if full is None:
            raise PermissionError(f"{path} is outside the environment ({TESTBED}, {VENV})")
        staged = f"{TESTBED}/.git/replay-incoming-{uuid.uuid4().hex}"
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            info = tarfile.TarInfo(posixpath.basename(staged))
            info.size, info.mode, info.mtime = len(data), 0o600, int(time.time())
            archive.addfile(info, io.BytesIO(data))
        try:
            self.client.api.put_archive(self.container_id, posixpath.dirname(staged),
                                        buffer.getvalue())
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            self._check_alive()
            raise EnvironmentFault(f"cannot stage a file in {TESTBED}/.git: {exc}") from None
        target, staged = shlex.quote(full), shlex.quote(staged)
        result = self.exec(f"mkdir -p \"$(dirname {target})\" && cat {staged} > {target}; "
                           f"code=$?; rm -f {staged}; exit $code", timeout=120)
        if not result.ok:
            if "Is a directory" in result.output:
                raise IsADirectoryError(path)
            raise PermissionError(f"cannot write {path}: {result.output.strip()[-300:]}")

    def reset(self) -> None:
        """A new container from the image in place of this one (see the module docstring)."""
        if self.closed:
            raise EnvironmentFault(f"docker container {self.container_id[:12]} was closed")
        old = self.container_id
        self.container_id, self.keep = self.create()
        remove_containers(self.client, [old])

    def snapshot(self) -> snapshots.Snapshot:
        return snapshots.capture(self, self.base_commit)

    def restore(self, snapshot: snapshots.Snapshot) -> None:
        snapshots.restore(self, snapshot)

    def alive(self) -> bool:
        """Whether the container still runs."""
        return not self.closed and gone(self.client, self.container_id) is None

    def close(self) -> None:
        """Remove the container and its volumes."""
        self.closed = True
        remove_containers(self.client, [self.container_id])

    def _stopped(self, patience: float) -> str | None:
        """Why the container stopped, waiting up to `patience` seconds for the engine to notice
        (a command killed with its container ends a moment before the container's state does).
        """
        deadline = time.monotonic() + patience
        while True:
            why = gone(self.client, self.container_id)
            if why is not None or time.monotonic() >= deadline:
                return why
            time.sleep(0.05)

    def _check_alive(self) -> None:
        why = gone(self.client, self.container_id)
        if why is not None:
            raise EnvironmentFault(f"docker container {self.container_id[:12]}: {why}")


class DockerBackend:
    """Builds images once per recipe and instance, and keeps one container warm per slot."""

    name = "docker"

    def __init__(self, mirrors: Path | None = None, base_image: str = DEFAULT_BASE_IMAGE,
                 cpus: float = 2.0, memory: str = "4g", pids: int = 4096) -> None:
        self.client = connect()
        orphans = remove_orphans(self.client)
        if orphans:
            log.info("removed %d container(s) of replay processes that are gone", orphans)
        self.mirrors = mirrors
        self.images = ImageBuilder(self.client, base_image, mirrors)
        self.images.base_key()
        self.limits = {"nano_cpus": int(cpus * 1e9), "mem_limit": memory,
                       "memswap_limit": memory, "pids_limit": pids}
        self._warm: dict[tuple[str, str, int], DockerEnvironment] = {}
        self._locks: dict[tuple[str, str, int], threading.Lock] = {}
        self._guard = threading.Lock()

    def start(self, instance: Instance, recipe: Recipe, rebuild: bool = False,
              slot: int = 0) -> DockerEnvironment:
        """The instance's warm container for `slot`, created (and its image built) if needed."""
        key = (instance.instance_id, recipe.digest(), slot)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            variables = recipe_variables(recipe, instance, self.mirrors)
            image = self.images.instance_image(instance, recipe, variables, rebuild)
            warm = self._warm.get(key)
            if warm is not None and warm.image == image and warm.alive():
                return warm
            if warm is not None:
                warm.close()
            self._warm[key] = self._create(instance, recipe, image, variables, slot)
            return self._warm[key]

    def close(self) -> None:
        """Remove every container this backend started."""
        with self._guard:
            warm, self._warm = list(self._warm.values()), {}
        remove_containers(self.client, [env.container_id for env in warm])
        for env in warm:
            env.closed = True

    def __enter__(self) -> DockerBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _route_to_loopback(self, container_id: str, addresses: list[str]) -> None:
        """Route `addresses` into a black hole on the container's loopback, from the host (the
        container holds no capability to do it): `nsenter` into its network namespace."""
        pid = self.client.api.inspect_container(container_id)["State"]["Pid"]
        for address in addresses:
            done = subprocess.run(["nsenter", "-t", str(pid), "-n", "ip", "route", "add",
                                   f"{address}/32", "dev", "lo"], capture_output=True, text=True)
            if done.returncode != 0:
                raise EnvironmentFault(f"cannot route {address} into a black hole: "
                                       f"{(done.stderr or done.stdout).strip()}")

    def _create(self, instance: Instance, recipe: Recipe, image: str,
                variables: dict[str, str], slot: int) -> DockerEnvironment:
        return DockerEnvironment(
            self.client, lambda: self._container(instance, recipe, image, variables, slot),
            image, instance.base_commit)

    def _container(self, instance: Instance, recipe: Recipe, image: str,
                   variables: dict[str, str], slot: int) -> tuple[str, str]:
        """A new container of the instance's image: its id, and the PIDs of its own processes
        (init and `sleep`), which commands never kill."""
        container = self.client.containers.run(
            image, ["sleep", "infinity"], detach=True, init=True, network_mode="none",
            read_only=True, tmpfs={"/tmp": "size=2g,mode=1777"}, working_dir=TESTBED,
            mounts=[Mount(TESTBED, None), Mount(VENV, None)],
            environment=command_variables(variables),
            cap_drop=["ALL"], security_opt=["no-new-privileges"],
            labels=labels("cell", **{"replay.instance": instance.instance_id,
                                     "replay.slot": str(slot)}),
            **self.limits)
        try:
            if recipe.unroutable:
                self._route_to_loopback(container.id, recipe.unroutable)
            done = run(self.client, container.id, ["cat", "/proc/1/task/1/children"], {}, "/",
                       1000)
        except BaseException:
            remove_containers(self.client, [container.id])
            raise
        return container.id, " ".join(["1", *done.output.decode().split()])
