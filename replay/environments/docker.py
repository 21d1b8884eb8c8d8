"""The `docker` backend: an instance's tree and venv in a container, at the same paths as `local`.

The repository is at /testbed and the venv at /opt/replay-venv, as the instance's image holds
them (see docker_images.py), so histories and scripts mean the same thing on either backend. A
container runs with no network, no capability and no-new-privileges, CPU, memory and process
limits, and a read-only root; each command gets an empty /tmp, runs in /testbed, and is killed
with its whole process group on timeout, as on `local`. Unroutable addresses of the recipe are
routed into a black hole on loopback once per container, by the engine from the host with
`nsenter` (the container itself never holds CAP_NET_ADMIN).

The tree and the venv are overlays over the image's own, mounted by the engine from the host
(`nsenter` into the container's mount namespace), whose writable layer is a tmpfs of bounded size
(CELL): what a cell writes there, in `.git/`, in ignored files or in the venv, is discarded with
the layer. The engine reads and writes files with commands in the container (a link resolves
there, never on the host).

One container per instance and slot is kept warm and reused across cells; `reset` (each
restore: before a continuation and before its tests) replaces the layer by an empty one, so the
tree with `.git/` and ignored files and the venv are exactly the image's again. Nothing outlives
its command: when a command returns, every process it left (a `setsid nohup` daemon
included) is killed, all but the container's init and its `sleep`.

A container belongs to the process that created it: `start` creates it with that process as
its `replay.owner`, only that backend ever hands it out (it never adopts a container
it finds), and its cell layer is its own, so two processes never
share a container or a tree and need no lease (local slots do: leases.py).

Containers are removed by `close()` (on normal exit and on Ctrl-C, by the command line); those of
a process that died (SIGKILL, a crash) by the next docker backend to start, or by `replay clean`.
A container that vanishes mid-cell makes `exec` raise `EnvironmentFault`; the next `start`
creates a new one.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from pathlib import Path

import docker

from replay.core.errors import EnvironmentFault
from replay.core.paths import BASE_PATH, TESTBED, VENV
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
from replay.environments.docker_engine import (
    connect,
    gone,
    labels,
    remove_containers,
    remove_orphans,
    run,
    run_input,
)
from replay.environments.docker_images import ImageBuilder
from replay.environments.recipes import Recipe, recipe_variables
from replay.instances.records import Instance
from replay.records.snapshot import Snapshot

log = logging.getLogger(__name__)

DEFAULT_BASE_IMAGE = "replay-base:bookworm"
CELL = "/run/replay-cell"  # the tmpfs that holds the overlays' writable layers
# Run from the host in the container's mount and PID namespaces: a new empty layer, the overlays
# of the tree and the venv over the image's own. $1 is the layer's size in bytes.
LAYER_SCRIPT = f"""set -e
umount -l {TESTBED} 2>/dev/null || true
umount -l {VENV} 2>/dev/null || true
umount -l {CELL}
mount -t tmpfs -o size=$1,mode=0700 replay-cell {CELL}
for part in tree venv; do mkdir -p {CELL}/$part/upper {CELL}/$part/work; done
mount -t overlay replay-layer -o lowerdir={TESTBED},upperdir={CELL}/tree/upper,\\
workdir={CELL}/tree/work {TESTBED}
mount -t overlay replay-layer -o lowerdir={VENV},upperdir={CELL}/venv/upper,\\
workdir={CELL}/venv/work {VENV}
"""
KILLED = 137
STOP_PATIENCE = 2.0
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


class DockerEnvironment:
    """One instance's warm container (see the module docstring)."""

    workdir = TESTBED

    def __init__(self, client: docker.DockerClient, container_id: str, keep: str, pid: int,
                 image: str, base_commit: str, disk: int) -> None:
        self.client = client
        self.container_id = container_id
        self.keep = keep  # the container's own processes (init, sleep), never killed
        self.pid = pid  # its init's PID on the host, to enter its namespaces from
        self.image = image
        self.base_commit = base_commit
        self.disk = disk
        self.closed = False
        self.read = ReadCache()

    def exec(self, command: str, timeout: float = 120.0, network: bool = False,
             env: dict[str, str] | None = None, output_limit: int = DEFAULT_OUTPUT_LIMIT,
             input: bytes | None = None) -> ExecResult:
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
        self.read.clear()
        done = run(self.client, self.container_id,
                   ["bash", "-c", EXEC_SCRIPT, "replay-exec", f"{timeout:.3f}", command,
                    self.keep],
                   env or {}, TESTBED, output_limit, input)
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
        """Bytes of a file in the tree or venv, read in the container. Raises
        FileNotFoundError otherwise."""
        full = inside(path)
        if full is None or self.closed:
            raise FileNotFoundError(path)
        known = self.read.get(full)
        if known is not None:
            return known
        done = run(self.client, self.container_id,
                   ["sh", "-c", READ_SCRIPT, "replay-read", full], {}, TESTBED, 1 << 30)
        if done.exit_code != 0:
            raise FileNotFoundError(path)
        return self.read.keep(full, done.output)

    def write_file(self, path: str, data: bytes) -> None:
        """Write a file in the tree or venv in the container, creating folders. Raises
        PermissionError elsewhere, IsADirectoryError for a folder."""
        full = inside(path)
        if full is None:
            raise PermissionError(f"{path} is outside the environment ({TESTBED}, {VENV})")
        if self.closed:
            raise EnvironmentFault(f"docker container {self.container_id[:12]} was closed")
        self.read.clear()
        code, errors = run_input(self.client, self.container_id,
                                 ["sh", "-c", WRITE_SCRIPT, "replay-write", full], data, TESTBED)
        check_written(path, code, errors)

    def reset(self) -> None:
        """An empty cell layer under the tree and the venv (see the module docstring)."""
        if self.closed:
            raise EnvironmentFault(f"docker container {self.container_id[:12]} was closed")
        self.exec("true")  # its epilogue kills whatever an earlier command left
        done = subprocess.run(["nsenter", "-t", str(self.pid), "-m", "-p", "-r", "-w", "--",
                               "sh", "-c", LAYER_SCRIPT, "replay-layer", str(self.disk)],
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            self._check_alive()
            raise EnvironmentFault(f"docker container {self.container_id[:12]}: cannot make a "
                                   f"new cell layer: {(done.stderr or done.stdout).strip()}")

    def snapshot(self) -> Snapshot:
        return snapshots.capture(self, self.base_commit)

    def restore(self, snapshot: Snapshot) -> None:
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
                 cpus: float = 2.0, memory: str = "4g", pids: int = 4096,
                 disk: int = 8 << 30) -> None:
        self.client = connect()
        orphans = remove_orphans(self.client)
        if orphans:
            log.info("removed %d container(s) of replay processes that are gone", orphans)
        self.mirrors = mirrors
        self.images = ImageBuilder(self.client, base_image, mirrors)
        self.images.base_key()
        self.disk = disk  # the size of a cell's layer (what it may write to the tree and venv)
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

    def _route_to_loopback(self, pid: int, addresses: list[str]) -> None:
        """Route `addresses` into a black hole on the loopback of the container whose init is
        `pid` on the host (the container holds no capability to do it): `nsenter` into its
        network namespace."""
        for address in addresses:
            done = subprocess.run(["nsenter", "-t", str(pid), "-n", "ip", "route", "add",
                                   f"{address}/32", "dev", "lo"], capture_output=True, text=True)
            if done.returncode != 0:
                raise EnvironmentFault(f"cannot route {address} into a black hole: "
                                       f"{(done.stderr or done.stdout).strip()}")

    def _create(self, instance: Instance, recipe: Recipe, image: str,
                variables: dict[str, str], slot: int) -> DockerEnvironment:
        """A new container of the instance's image, routed and with an empty cell layer."""
        container = self.client.containers.run(
            image, ["sleep", "infinity"], detach=True, init=True, network_mode="none",
            read_only=True, working_dir=TESTBED,
            tmpfs={"/tmp": "size=2g,mode=1777", CELL: f"size={self.disk},mode=0700,exec"},
            environment=command_variables(variables),
            cap_drop=["ALL"], security_opt=["no-new-privileges"],
            labels=labels("cell", **{"replay.instance": instance.instance_id,
                                     "replay.slot": str(slot)}),
            **self.limits)
        try:
            pid = self.client.api.inspect_container(container.id)["State"]["Pid"]
            if recipe.unroutable:
                self._route_to_loopback(pid, recipe.unroutable)
            own = run(self.client, container.id, ["cat", "/proc/1/task/1/children"], {}, "/",
                      1000)
            env = DockerEnvironment(self.client, container.id,
                                    " ".join(["1", *own.output.decode().split()]), pid, image,
                                    instance.base_commit, self.disk)
            env.reset()
        except BaseException:
            remove_containers(self.client, [container.id])
            raise
        return env
