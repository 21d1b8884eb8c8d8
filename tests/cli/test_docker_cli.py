"""`--backend docker` as a user runs it: the same grades as local, continuations, faults, clean.

All but the first test need a Docker Engine and the base image: `bash scripts/docker-engine.sh
&& bash scripts/build-base-image.sh` (skipped with that reason otherwise).
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from replay.environments.docker import DockerBackend
from replay.environments.docker_engine import OWNER
from replay.environments.recipes import load_recipe
from replay.instances.records import load_suite
from replay.judge.grading import grade_log
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from agent_scripts import call, fixing_turns
from conftest import REPLAY, docker_problem, run_replay

DEMO = {instance.instance_id: instance for instance in load_suite("demo").instances}
TALLY = DEMO["replay-demo__tally-1"]


PROBLEM = docker_problem()
needs_docker = pytest.mark.skipif(PROBLEM is not None, reason=str(PROBLEM))


def test_no_engine_or_a_base_image_for_local_is_one_line(tmp_path: Path) -> None:
    done = run_replay("validate", "--backend", "docker", "--store", str(tmp_path / "r.db"),
                      env={"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"})
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "bash scripts/docker-engine.sh" in lines[0]
    assert "--backend local" in lines[0]
    assert not (tmp_path / "r.db").exists()
    done = run_replay("validate", "--base-image", "replay-base:bookworm", "--store",
                      str(tmp_path / "r.db"))
    assert done.returncode == 2 and "--base-image applies to --backend docker only" in done.stderr


def statuses(store: Path) -> dict[str, dict[str, dict[str, str]]]:
    """Per instance and run (without fix, with gold): each test's status, from the saved logs."""
    found = {}
    for instance_id, checks in sqlite3.connect(store).execute(
            "SELECT instance_id, checks FROM validations"):
        checks = json.loads(checks)
        found[instance_id] = {
            run: grade_log(DEMO[instance_id], Path(checks[run]["log"]).read_text()).statuses
            for run in ("without_fix", "with_gold")}
    return found


@needs_docker
def test_validate_grades_the_demo_suite_exactly_as_local(tmp_path: Path) -> None:
    stores = {}
    for backend in ("local", "docker"):
        stores[backend] = tmp_path / f"{backend}.db"
        done = run_replay("validate", "--backend", backend, "--store", str(stores[backend]))
        assert done.returncode == 0, done.stdout + done.stderr
    docker_statuses = statuses(stores["docker"])
    assert sorted(docker_statuses) == sorted(DEMO)
    assert all(runs["without_fix"] and runs["with_gold"] for runs in docker_statuses.values())
    assert docker_statuses == statuses(stores["local"])
    assert not _replay_containers()


def _replay_containers() -> list:
    return docker.from_env().containers.list(all=True, filters={"label": "replay=1"},
                                             ignore_removed=True)


def _wait_for_command(text: str, timeout: float = 120) -> docker.models.containers.Container:
    """The replay container running a process whose command line contains `text`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for container in _replay_containers():
            try:
                processes = container.top()["Processes"] or []
            except docker.errors.APIError:
                continue
            if any(text in " ".join(process) for process in processes):
                return container
        time.sleep(0.1)
    raise AssertionError(f"no replay container ran {text!r} within {timeout} s")


@needs_docker
def test_a_continuation_runs_in_a_container_killed_mid_cell_is_error_then_redone(
        tmp_path: Path) -> None:
    wait = call("bash", command="sleep 4 && echo slept")
    turns = [{"content": "Let me wait.", "tool_calls": [wait]}, *fixing_turns(TALLY, tmp_path)]
    args = ["cell", "--backend", "docker", "--instance", TALLY.instance_id, "--arm", "pre",
            "--store", str(tmp_path / "replay.db")]
    with ScriptedServer(Script(turns, model="agent")) as server:
        args += ["--agent-model", f"openai:agent@{server.base_url}"]
        with subprocess.Popen([*REPLAY, *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as process:
            try:
                _wait_for_command("sleep 4").kill()
                stdout, stderr = process.communicate(timeout=300)
            finally:
                process.kill()
        assert process.returncode == 1, stdout + stderr
        assert "error" in stdout and "EnvironmentFault" in stdout and "docker container" in stdout
        again = run_replay(*args)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "tests pass" in again.stdout and "(kept in the store)" not in again.stdout
    trace = json.loads(next((tmp_path / "artifacts").rglob("trace.json")).read_text())
    assert any("slept" in str(message.get("content")) for message in trace["messages"])
    assert not _replay_containers()


CRASH = """
import os, sys
from replay.environments.docker import DockerBackend
from replay.instances.records import load_suite
from replay.environments.recipes import load_recipe
instance = load_suite("demo").instances[0]
backend = DockerBackend()
for slot in (0, 1):
    backend.start(instance, load_recipe(instance), slot=slot)
print(os.getpid(), flush=True)
os._exit(9)
"""


@needs_docker
def test_clean_removes_what_a_crashed_run_left_and_all_removes_live_runs_too() -> None:
    with DockerBackend() as live:  # before the crash: a backend starting after it removes them
        kept = live.start(TALLY, load_recipe(TALLY)).container_id
        crashed = subprocess.run([sys.executable, "-c", CRASH], capture_output=True, text=True,
                                 timeout=300)
        pid = crashed.stdout.strip()
        assert crashed.returncode == 9 and pid, crashed.stderr
        left = {c.id for c in _replay_containers() if f":{pid}:" in c.labels.get(OWNER, "")}
        assert len(left) == 2
        done = run_replay("clean")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "removed 2 container(s) (kept 1 of engines still going" in done.stdout
        remaining = {container.id for container in _replay_containers()}
        assert kept in remaining and not remaining & left
        done = run_replay("clean", "--all")
        assert done.returncode == 0 and "removed 1 container(s)" in done.stdout
    assert not _replay_containers()


@needs_docker
def test_ctrl_c_removes_the_containers_of_the_run(tmp_path: Path) -> None:
    args = ["validate", "--backend", "docker", "--instance", TALLY.instance_id, "--store",
            str(tmp_path / "r.db")]
    with subprocess.Popen([*REPLAY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as process:
        try:
            running = _wait_for_command("pytest")
            assert f":{process.pid}:" in running.labels[OWNER]
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=120)
        finally:
            process.kill()
    assert process.returncode == 130, stdout + stderr
    assert not [c for c in _replay_containers() if f":{process.pid}:" in c.labels[OWNER]]


@needs_docker
def test_a_missing_base_image_is_bad_input(tmp_path: Path) -> None:
    store = str(tmp_path / "r.db")
    done = run_replay("validate", "--backend", "docker", "--base-image", "replay-test/none:1",
                      "--store", store)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: base image replay-test/none:1 not found: build it with `bash "
        "scripts/build-base-image.sh`, or pass --base-image"]
