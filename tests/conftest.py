"""Shared fixtures: a private replay home for the whole session, and small real instances."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replay.instances import Instance, load_instance_dir
from replay.repos import commit_files

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


def run_replay(*args: str, cwd: Path | None = None,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the `replay` command line in a subprocess, as a user would."""
    return subprocess.run([*REPLAY, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200", **(env or {})}, timeout=600)


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
