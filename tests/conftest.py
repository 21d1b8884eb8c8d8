"""Shared fixtures: a private replay home for the whole session, and small real instances."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replay.core.errors import InputError
from replay.environments.repos import commit_files
from replay.instances.records import Instance, load_instance_dir
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.retry import Backoff
from replay.models.types import ModelSpec

SHARED = Path(__file__).resolve().parents[2] / "shared"
VERIFIED_JSONL = SHARED / "swebench" / "SWE-bench_Verified.test.jsonl"
VERIFIED_PARQUET = SHARED / "swebench" / "SWE-bench_Verified.test.parquet"
REPLAY = [sys.executable, "-m", "replay"]


@pytest.fixture(scope="session", autouse=True)
def replay_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One REPLAY_HOME per test session, so environments are built once and shared by tests."""
    home = tmp_path_factory.mktemp("replay-home")
    previous = os.environ.get("REPLAY_HOME")
    os.environ["REPLAY_HOME"] = str(home)
    yield home
    if previous is None:
        os.environ.pop("REPLAY_HOME", None)
    else:
        os.environ["REPLAY_HOME"] = previous


# Tests that share a machine-wide thing run on one worker when the suite runs on several
# (`pytest -n 3`, as scripts/test.sh runs it): every test that starts a Docker Engine's container
# (they count and remove every replay container of the machine), and the tests that read the
# session's demo sweep (made once per worker). The rest go by module (its module fixtures are
# made once).
DOCKER_MODULES = ("tests/engine/test_slot_leases.py", "tests/engine/test_recipes.py")
DEMO_SWEEP = ("tests/engine/test_view_browser.py",
              "tests/engine/test_sweep.py::test_backbone_and_prompt_sweeps",
              "tests/engine/test_sweep.py::test_confirm_reruns",
              "tests/engine/test_sweep.py::test_the_exports_of_a_confirmed_run")


def worker_scope(nodeid: str) -> str:
    """Which worker's queue a test joins (see above)."""
    if "docker" in nodeid.lower() or nodeid.startswith(DOCKER_MODULES):
        return "docker"
    if nodeid.startswith(DEMO_SWEEP):
        return "demo-sweep"
    return nodeid.split("::")[0]


# The longest queues start first (their summed seconds on two workers: the Hermes panel about
# 360, the Docker tests about 300, contamination 100, the interrupted sweep and the test
# timeouts about 90 each), so that none is left to run alone at the end.
LONGEST_FIRST = ("tests/engine/test_hermes_panel.py", "docker",
                 "tests/engine/test_contamination.py", "tests/engine/test_sweep_interrupt.py",
                 "tests/engine/test_test_timeouts.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the longest queues (`LONGEST_FIRST`) first; the order inside a queue stays."""
    rank = {scope: index for index, scope in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(worker_scope(item.nodeid), len(rank)))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scheduling by scope, the scope being `worker_scope`."""
    from xdist.scheduler import LoadScopeScheduling

    class ByScope(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_scope(nodeid)

    return ByScope(config, log)


def run_replay(*args: str, cwd: Path | None = None,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the `replay` command line in a subprocess, as a user would."""
    return subprocess.run([*REPLAY, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200", **(env or {})}, timeout=600)


def replay_here(*args: str, cwd: Path | None = None,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the `replay` command line in this process (`replay.cli.run`, what `replay` itself
    calls), as `run_replay` does in a subprocess: for what a command refuses or prints, where a
    process adds nothing to what is asserted but a second of start-up."""
    from replay.cli import run
    from replay.commands.options import PIPED_WIDTH, console

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {"COLUMNS": "200", **(env or {})}.items():
            patch.setenv(name, value)
        # the console made at import read the COLUMNS of then (80 on an xdist worker)
        columns = os.environ["COLUMNS"]
        patch.setattr(console, "width", int(columns) if columns.isdigit() else PIPED_WIDTH)
        if cwd is not None:
            patch.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(list(args))
    return subprocess.CompletedProcess([*REPLAY, *args], code, out.getvalue(), err.getvalue())


def one_line_exit_2(done: subprocess.CompletedProcess[str], message: str) -> None:
    """The command refused its input as bad input should be: exit 2 and one line on stderr,
    `error: ` and `message` first."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr
    assert done.stderr.startswith(f"error: {message}"), done.stderr


TINY_FILES = {
    "shapes/__init__.py": "",
    "shapes/area.py": (
        "def rectangle(width, height):\n"
        "    return width * height\n\n\n"
        "def square(side):\n"
        "    return side * side * side\n"
    ),
    "tests/__init__.py": "",
    "tests/test_area.py": (
        "from shapes.area import rectangle\n\n\n"
        "def test_rectangle():\n"
        "    assert rectangle(2, 3) == 6\n"
    ),
    ".gitignore": "*.pyc\n__pycache__/\n",
}

TINY_PATCH = (
    "diff --git a/shapes/area.py b/shapes/area.py\n"
    "--- a/shapes/area.py\n"
    "+++ b/shapes/area.py\n"
    "@@ -3,4 +3,4 @@ def rectangle(width, height):\n"
    " \n"
    " \n"
    " def square(side):\n"
    "-    return side * side * side\n"
    "+    return side * side\n"
)

TINY_TEST_PATCH = (
    "diff --git a/tests/test_area.py b/tests/test_area.py\n"
    "--- a/tests/test_area.py\n"
    "+++ b/tests/test_area.py\n"
    "@@ -1,5 +1,9 @@\n"
    "-from shapes.area import rectangle\n"
    "+from shapes.area import rectangle, square\n"
    " \n"
    " \n"
    " def test_rectangle():\n"
    "     assert rectangle(2, 3) == 6\n"
    "+\n"
    "+\n"
    "+def test_square():\n"
    "+    assert square(3) == 9\n"
)


def write_tiny_instance(directory: Path, **overrides: object) -> Path:
    """Write a small real instance (repository files + instance.json) under `directory`."""
    repo = directory / "repo"
    for name, text in TINY_FILES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    scratch = directory / "scratch"
    base = commit_files(repo, scratch)
    subprocess.run(["rm", "-rf", str(scratch)], check=True)
    record = {
        "instance_id": "replay-demo__tiny-1", "repo": "replay-demo/tiny", "base_commit": base,
        "patch": TINY_PATCH, "test_patch": TINY_TEST_PATCH,
        "problem_statement": "square(3) returns 27 instead of 9.",
        "FAIL_TO_PASS": ["tests/test_area.py::test_square"],
        "PASS_TO_PASS": ["tests/test_area.py::test_rectangle"], "version": "1.0",
        **overrides,
    }
    (directory / "instance.json").write_text(json.dumps(record, indent=2))
    return directory


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Instance:
    """A small real instance whose repository is written by the test suite."""
    return load_instance_dir(write_tiny_instance(tmp_path_factory.mktemp("tiny")))


REAL = ["psf__requests-5414", "pytest-dev__pytest-7571", "pytest-dev__pytest-10081"]
REAL_REPOS = ["psf/requests", "pytest-dev/pytest"]


def real_mirrors() -> Path | None:
    """The folder of bare mirrors (REPLAY_REPO_MIRRORS) when it holds every repository of the
    real instances the tests validate (REAL), else None."""
    from replay.core.paths import repo_mirrors_from_env
    from replay.environments.repos import find_mirror

    mirrors = repo_mirrors_from_env()
    if mirrors is None or any(find_mirror(mirrors, repo) is None for repo in REAL_REPOS):
        return None
    return mirrors


@functools.cache
def docker_problem() -> str | None:
    """Why the docker backend cannot run here (no engine answering, no base image), or None."""
    from replay.environments.docker import DockerBackend

    try:
        DockerBackend().close()
    except InputError as exc:
        return f"docker backend unavailable: {exc}"
    return None


def python_problem(version: str) -> str | None:
    """Why no Python `version` can be had on this machine for the local backend, or None."""
    from replay.environments.interpreters import find_python

    try:
        find_python(version)
    except InputError as exc:
        return str(exc)
    return None


def needs_python(version: str) -> pytest.MarkDecorator:
    """Skip unless a Python `version` can be had here (the message says how to get one)."""
    problem = python_problem(version)
    return pytest.mark.skipif(problem is not None, reason=str(problem))


def needs_docker() -> pytest.MarkDecorator:
    """Skip unless a Docker Engine answers and the base image exists, saying which is missing."""
    problem = docker_problem()
    return pytest.mark.skipif(problem is not None, reason=str(problem))


def make_backend_named(name: str, **options: object) -> Any:
    """A fresh backend of either kind, for the tests every backend must pass."""
    if name == "docker":
        from replay.environments.docker import DockerBackend

        return DockerBackend(**options)
    from replay.environments.local import LocalBackend

    return LocalBackend(**options)


BACKENDS = [pytest.param("local"), pytest.param("docker", marks=needs_docker())]


# Models: a fake key, fast retries, a tool and a small history.
KEY_ENV = "REPLAY_TEST_MODEL_KEY"
FAKE_KEY = "sk-replay-fake-7f3a9c0e5b1d"
FAST = Backoff(initial=0.01, cap=0.05)

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command in the repository.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}


def bash_call(call_id: str, command: str) -> dict:
    """An OpenAI-format tool call of the bash tool."""
    return {"id": call_id, "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


def history() -> list[dict]:
    """System prompt, task, two parallel tool calls (a Kimi-style id among them), results."""
    return [
        {"role": "system", "content": "You are a careful engineer."},
        {"role": "user", "content": "Fix square() in shapes/area.py."},
        {"role": "assistant", "content": "Looking first.",
         "tool_calls": [bash_call("functions.bash:0", "cat shapes/area.py"),
                        bash_call("call_2", "ls")]},
        {"role": "tool", "tool_call_id": "functions.bash:0", "content": "def square(side): ..."},
        {"role": "tool", "tool_call_id": "call_2", "content": "shapes tests"},
        {"role": "user", "content": "Continue."},
    ]


def make_client(spec: ModelSpec, cache: CallCache, max_attempts: int = 3,
                timeout: float = 5.0) -> ModelClient:
    """A client with fast backoff for tests."""
    return ModelClient(spec, cache, max_attempts=max_attempts, backoff=FAST, timeout=timeout)


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="session")
def demo_sweep(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The session's scripted backbone + prompt + confirm sweep (tests/fake/demo_sweep.py),
    made once: tests that only read a store read this one."""
    from demo_sweep import make_demo_sweep

    return make_demo_sweep(tmp_path_factory.mktemp("demo-sweep"))
