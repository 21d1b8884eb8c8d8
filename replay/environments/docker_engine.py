"""The Docker Engine as replay uses it: one connection, labels, commands run inside containers.

Everything replay creates carries the label `replay=1`; containers also carry `replay.owner`, the
host, pid and start time of the process that made them, so that a new docker backend (and
`replay clean`) can tell the containers of a crashed run from those of a run still going.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.utils.socket import frames_iter

from replay.core.errors import EnvironmentFault, InputError
from replay.environments.spool import CappedOutput

LABEL = "replay"
KIND = "replay.kind"
OWNER = "replay.owner"
NO_ENGINE = ("no Docker Engine answers (docker version fails): start one with "
             "`bash scripts/docker-engine.sh`, or use --backend local")
PING_TIMEOUT = 10


def connect() -> docker.DockerClient:
    """A client of the engine named by the usual DOCKER_* settings; bad input if none answers.

    The client has no read timeout: every command replay runs in a container is bounded by
    `timeout` inside it, and a test run may stay silent for longer than any fixed timeout.
    """
    try:
        probe = docker.from_env(timeout=PING_TIMEOUT)
        probe.ping()
        probe.close()
        return docker.from_env(timeout=None)
    except (docker.errors.DockerException, requests.exceptions.RequestException):
        raise InputError(NO_ENGINE) from None


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def owner() -> str:
    """This process, as `host:pid:start-time`."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_time(pid)}"


def owner_alive(value: str) -> bool:
    """Whether the process a `replay.owner` label names still runs (other hosts: assumed so)."""
    host, _, rest = value.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname():
        return True
    return pid.isdigit() and _start_time(int(pid)) == started


def labels(kind: str, **extra: str) -> dict[str, str]:
    """The labels of a container replay creates."""
    return {LABEL: "1", KIND: kind, OWNER: owner(), **extra}


def replay_containers(client: docker.DockerClient) -> list[Any]:
    """Every container (running or not) that carries replay's label."""
    return client.containers.list(all=True, filters={"label": f"{LABEL}=1"},
                                  ignore_removed=True)


def remove_orphans(client: docker.DockerClient) -> int:
    """Remove the containers whose owner process on this host is gone; how many there were."""
    orphans = [container.id for container in replay_containers(client)
               if not owner_alive(container.labels.get(OWNER, ""))]
    remove_containers(client, orphans)
    return len(orphans)


def remove_containers(client: docker.DockerClient, ids: Iterable[str]) -> None:
    """Remove containers and their anonymous volumes; ones already gone are fine."""
    for container_id in ids:
        try:
            client.api.remove_container(container_id, force=True, v=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if "already in progress" not in str(exc):
                raise


@dataclass(frozen=True)
class Run:
    """What one command in a container did."""

    exit_code: int | None
    output: bytes
    truncated: bool


def gone(client: docker.DockerClient, container_id: str) -> str | None:
    """Why the container cannot run commands (removed, stopped), or None when it runs."""
    try:
        state = client.api.inspect_container(container_id)["State"]
    except docker.errors.NotFound:
        return "it no longer exists"
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        return f"the engine does not answer: {exc}"
    if state.get("Running"):
        return None
    return f"it is {state.get('Status')} (exit code {state.get('ExitCode')}, " \
           f"OOM killed: {state.get('OOMKilled')})"


def run(client: docker.DockerClient, container_id: str, argv: list[str],
        environment: dict[str, str], workdir: str, limit: int,
        data: bytes | None = None) -> Run:
    """Run `argv` in the container with `data` on its standard input (None: none); its stdout
    is kept (capped), its stderr dropped.

    Raises `EnvironmentFault` when the container is gone or the engine fails.
    """
    if data is not None:
        code, output, _, truncated = _exchange(client, container_id, argv, environment,
                                               workdir, data, limit, None)
        return Run(code, output, truncated)
    api = client.api
    try:
        exec_id = api.exec_create(container_id, argv, environment=environment,
                                  workdir=workdir)["Id"]
        sink = CappedOutput(limit)
        for stdout, _stderr in api.exec_start(exec_id, stream=True, demux=True):
            if stdout:
                sink.add(stdout)
        code = api.exec_inspect(exec_id)["ExitCode"]
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise _fault(client, container_id, exc) from None
    output, truncated = sink.value()
    return Run(code, output, truncated)


def run_input(client: docker.DockerClient, container_id: str, argv: list[str], data: bytes,
              workdir: str, timeout: float = 120.0) -> tuple[int | None, bytes]:
    """Run `argv` in the container with `data` on its standard input; its exit code and stderr.

    Raises `EnvironmentFault` when the container is gone or the engine fails.
    """
    code, _, errors, _ = _exchange(client, container_id, argv, {}, workdir, data, 0, timeout)
    return code, errors


def _exchange(client: docker.DockerClient, container_id: str, argv: list[str],
              environment: dict[str, str], workdir: str, data: bytes, limit: int,
              timeout: float | None) -> tuple[int | None, bytes, bytes, bool]:
    """Run `argv` with `data` on its stdin: its exit code, stdout (capped at `limit`, as
    `run` keeps it), stderr and whether stdout was cut. `timeout` bounds each socket read
    (None: the command bounds itself)."""
    api = client.api
    try:
        exec_id = api.exec_create(container_id, argv, stdin=True, environment=environment,
                                  workdir=workdir)["Id"]
        stream = api.exec_start(exec_id, socket=True)
        raw = stream._sock  # the upgraded connection: write stdin, then read the frames
        raw.settimeout(timeout)
        sender = threading.Thread(target=_send, args=(raw, data), daemon=True)
        sender.start()
        sink, errors = CappedOutput(limit), bytearray()
        for kind, chunk in frames_iter(stream, tty=False):
            if kind == 1:
                sink.add(chunk)
            elif kind == 2:
                errors += chunk
        sender.join(timeout)
        code = api.exec_inspect(exec_id)["ExitCode"]
    except (docker.errors.DockerException, requests.exceptions.RequestException,
            OSError) as exc:
        raise _fault(client, container_id, exc) from None
    output, truncated = sink.value()
    return code, output, bytes(errors), truncated


def _fault(client: docker.DockerClient, container_id: str, exc: Exception) -> EnvironmentFault:
    why = gone(client, container_id) or f"the engine failed: {exc}"
    return EnvironmentFault(f"docker container {container_id[:12]}: {why}")


def _send(raw: socket.socket, data: bytes) -> None:
    try:
        raw.sendall(data)
        raw.shutdown(socket.SHUT_WR)
    except OSError:  # the command stopped reading (and its exit code says why)
        pass
