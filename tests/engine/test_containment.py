"""Escape tests: each attack runs through the agent's own bash tool, in a real `replay run`.

A scripted model on 127.0.0.1 asks for one bash call per probe; the engine is a subprocess that
holds the model key in its environment, as a user's would. Each probe prints BLOCKED:<name> or
ESCAPED:<name>, and the key must appear nowhere: not in any command's output, the trace or the
store. Run for both backends (docker skips without an engine, saying why).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from replay.instances.records import load_suite
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from agent_scripts import call
from conftest import BACKENDS, FAKE_KEY, KEY_ENV, REPLAY

TALLY = next(i for i in load_suite("demo").instances if i.instance_id == "replay-demo__tally-1")
HOST_MARK = Path("/usr/local/lib/replay-escape-probe")


def _probe(name: str, attack: str) -> dict:
    """A bash call that prints ESCAPED:name when `attack` succeeds, else BLOCKED:name."""
    return call("bash", command=f"if ( {attack} ) >/dev/null 2>&1; then echo ESCAPED:{name}; "
                                f"else echo BLOCKED:{name}; fi")


def _probes(host_pid: int, host_port: int, host_file: Path) -> dict[str, dict]:
    connect = "python -c \"import socket; s = socket.socket({family}); s.settimeout(2); " \
              "s.connect({address})\""
    return {
        "key-in-proc-environ": _probe("key-in-proc-environ",
                                      f"grep -a -q {KEY_ENV}= /proc/*/environ"),
        "key-in-env": _probe("key-in-env", f"env | grep -q {KEY_ENV}"),
        "remount-root": _probe("remount-root", f"mount -o remount,bind,rw / && touch {HOST_MARK}"),
        "mount-tmpfs": _probe("mount-tmpfs", "mount -t tmpfs none /usr/local"),
        "nsenter-host": _probe("nsenter-host", f"nsenter -t {host_pid} -n -m true"),
        "see-host-process": _probe("see-host-process", f"test -d /proc/{host_pid}"),
        "signal-host-process": _probe("signal-host-process", f"kill -0 {host_pid}"),
        "docker-socket": _probe("docker-socket", connect.format(
            family="socket.AF_UNIX", address="'/var/run/docker.sock'")),
        "host-loopback": _probe("host-loopback", connect.format(
            family="", address=f"('127.0.0.1', {host_port})")),
        "read-host-file": _probe("read-host-file", f"cat {host_file}"),
        "see-host-checkout": _probe("see-host-checkout", f"test -e {Path(__file__).parent}"),
        "see-docker-data": _probe("see-docker-data", "test -e /var/lib/docker/overlay2"),
        "write-usr": _probe("write-usr", "touch /usr/replay-escape-probe"),
        "write-etc": _probe("write-etc", "touch /etc/replay-escape-probe"),
        "write-var-tmp": _probe("write-var-tmp", "touch /var/tmp/replay-escape-probe"),
        "write-sysctl": _probe("write-sysctl", "echo 1 > /proc/sys/kernel/printk_ratelimit"),
        "new-user-namespace": _probe("new-user-namespace", "unshare -Ur true"),
    }


def _local_probes() -> dict[str, dict]:
    """The local sandbox shows the host's own /etc (read-only): what root alone may read is
    masked. (A container's /etc is its image's, not the host's.)"""
    return {"read-host-shadow": _probe("read-host-shadow", "grep -q root /etc/shadow")}


def _turns(probes: dict[str, dict]) -> list[dict]:
    return [{"content": "Looking around.", "tool_calls": list(probes.values())},
            {"content": "Done.", "tool_calls": [call("finish", summary="nothing")]}]


def _run(backend: str, server: ScriptedServer, store: Path) -> subprocess.Popen[str]:
    agent = f"openai:agent@{server.base_url}#{KEY_ENV}"
    return subprocess.Popen(
        [*REPLAY, "cell", "--instance", TALLY.instance_id, "--arm", "pre", "--agent-model", agent,
         "--store", str(store), "--backend", backend],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, KEY_ENV: FAKE_KEY, "COLUMNS": "200"})


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_escape_probe_through_the_agents_bash_tool_is_blocked(
        backend: str, tmp_path: Path) -> None:
    host_file = tmp_path / "host-secret.txt"
    host_file.write_text("host data\n")
    store = tmp_path / "replay.db"
    with socket.create_server(("127.0.0.1", 0)) as listener:
        probes = _probes(os.getpid(), listener.getsockname()[1], host_file)
        if backend == "local":
            probes |= _local_probes()
        with ScriptedServer(Script(_turns(probes), model="agent")) as server:
            process = _run(backend, server, store)
            out, err = process.communicate(timeout=600)
    assert process.returncode == 1, out + err  # the agent fixed nothing: its tests fail
    trace_line = next(line for line in out.splitlines() if line.strip().startswith("trace "))
    trace = Path(trace_line.split()[1]).read_text()
    outputs = [message["content"] for message in json.loads(trace)["messages"]
               if message.get("role") == "tool"]
    for name in probes:
        assert any(f"BLOCKED:{name}" in text for text in outputs), (name, outputs)
    assert not [text for text in outputs if "ESCAPED:" in text]
    assert not HOST_MARK.exists()
    for path in (Path("/usr/replay-escape-probe"), Path("/etc/replay-escape-probe"),
                 Path("/var/tmp/replay-escape-probe")):
        assert not path.exists(), path
    for artifact in [store, *tmp_path.rglob("*")]:
        if artifact.is_file():
            assert FAKE_KEY.encode() not in artifact.read_bytes(), artifact


def test_a_killed_engine_leaves_no_process_mount_or_control_group(tmp_path: Path) -> None:
    """SIGKILL the engine mid-cell, while the agent's command (and a background child) sleeps:
    afterwards no process is left in the cell's namespaces, nothing of the cell is mounted on the
    host (its layer, its namespaces) and the engine's control group is gone, without `replay
    clean` or another engine."""
    marker = f"317.{os.getpid()}"  # this session's sleepers alone
    turns = [{"content": "Waiting.", "tool_calls": [
        call("bash", command=f"sleep {marker} & sleep {marker}; echo done")]}]
    with ScriptedServer(Script(turns, model="agent")) as server:
        process = _run("local", server, tmp_path / "replay.db")
        try:
            spaces, groups = _cell_of(process, marker)
        finally:
            process.kill()
            process.wait()
    deadline = time.monotonic() + 10
    while _left(marker, spaces, groups) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _left(marker, spaces, groups) == []
    host = Path("/proc/self/mountinfo").read_text()
    assert not [line for line in host.splitlines() if os.environ["REPLAY_HOME"] in line
                or any(space in line for space in spaces)]


def _cell_of(engine: subprocess.Popen[str], marker: str) -> tuple[set[str], list[Path]]:
    """Once the cell's command sleeps: the namespaces its processes are in (the holder, a child
    of the engine, among them) and the engine's control groups."""
    deadline = time.monotonic() + 120
    while len(_sleepers(marker)) < 2:
        assert engine.poll() is None and time.monotonic() < deadline, engine.stderr
        time.sleep(0.1)
    cell_net = _namespace(_sleepers(marker)[0], "net")
    cell = [pid for pid in _pids() if _namespace(pid, "net") == cell_net]
    spaces = {_namespace(pid, kind) for pid in cell for kind in ("net", "mnt")} - {""}
    groups = _groups_of(engine.pid)
    assert groups and any(_parent(pid) == engine.pid for pid in cell)  # v1: two groups
    return spaces, groups


def _left(marker: str, spaces: set[str], groups: list[Path]) -> list[str]:
    """What is still there of a killed engine's cell: sleepers, processes in its namespaces,
    control groups."""
    return ([f"sleeper {pid}" for pid in _sleepers(marker)]
            + [f"process {pid}" for pid in _pids()
               if {_namespace(pid, "net"), _namespace(pid, "mnt")} & spaces]
            + [f"group {group}" for group in groups if group.exists()])


def _sleepers(marker: str) -> list[int]:
    done = subprocess.run(["pgrep", "-f", f"^sleep {marker}$"], capture_output=True, text=True)
    return [int(pid) for pid in done.stdout.split()]


def _pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _namespace(pid: int, kind: str) -> str:
    """The namespace of `kind` process `pid` is in (`net:[4026532...]`), "" once it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/{kind}")
    except OSError:
        return ""


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _groups_of(engine: int) -> list[Path]:
    """The control groups the local backend made for engine `engine` (replay-PID-TOKEN)."""
    return sorted(Path("/sys/fs/cgroup").rglob(f"replay-{engine}-*"))
