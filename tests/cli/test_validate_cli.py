"""`replay validate` as a user runs it: verdicts, exit codes, and bad input."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from conftest import VERIFIED_JSONL, replay_here, run_replay, write_tiny_instance


def write_suite(root: Path, **overrides: object) -> Path:
    """A suite folder holding the tiny instance (with fields overridden)."""
    write_tiny_instance(root / "replay-demo__tiny-1", **overrides)
    (root / "suite.toml").write_text('description = "tiny"\ninstances = ["replay-demo__tiny-1"]\n')
    return root


def store_state(path: Path) -> tuple[str, list[tuple]]:
    rows = sqlite3.connect(path).execute("SELECT * FROM validations ORDER BY 1").fetchall()
    return hashlib.sha256(path.read_bytes()).hexdigest(), rows


@pytest.fixture(scope="module")
def filled_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store that already holds a verdict, to show bad input leaves it untouched."""
    root = tmp_path_factory.mktemp("store")
    suite = write_suite(root / "suite")
    done = run_replay("validate", "--suite", str(suite), "--store", str(root / "replay.db"))
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "replay.db"


def test_a_valid_instance_prints_a_line_a_table_and_a_record(filled_store: Path) -> None:
    status, reasons, checks = sqlite3.connect(filled_store).execute(
        "SELECT status, reasons, checks FROM validations").fetchone()
    assert status == "valid" and json.loads(reasons) == []
    checks = json.loads(checks)
    assert checks["real_repair"] and checks["solvable"] and checks["restore_identical"]
    assert checks["with_gold"]["fail_to_pass"]["success"] == ["tests/test_area.py::test_square"]
    assert Path(checks["with_gold"]["log"]).is_file()


def test_an_instance_that_is_no_real_repair_is_excluded_with_exit_1(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite",
                        FAIL_TO_PASS=["tests/test_area.py::test_rectangle"],
                        PASS_TO_PASS=[])
    done = run_replay("validate", "--suite", str(suite), "--store", str(tmp_path / "r.db"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "excluded" in done.stdout and "not a real repair" in done.stdout


def _bad_input(filled_store: Path, *args: str, env: dict[str, str] | None = None) -> str:
    before = store_state(filled_store)
    done = replay_here("validate", *args, "--store", str(filled_store), env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert store_state(filled_store) == before
    return lines[0]


def test_malformed_dataset_line(filled_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(VERIFIED_JSONL.read_text().splitlines()[0][:200] + "\n")
    assert "broken.jsonl:1: malformed JSON line" in _bad_input(filled_store, "--dataset",
                                                                 str(path))


def test_unknown_instance_id(filled_store: Path) -> None:
    line = _bad_input(filled_store, "--dataset", str(VERIFIED_JSONL), "--instance", "psf__nope-1")
    assert "unknown instance id: psf__nope-1" in line


def test_row_missing_fail_to_pass(filled_store: Path, tmp_path: Path) -> None:
    row = json.loads(VERIFIED_JSONL.read_text().splitlines()[0])
    del row["FAIL_TO_PASS"]
    path = tmp_path / "missing.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert "field FAIL_TO_PASS: missing" in _bad_input(filled_store, "--dataset", str(path))


def test_gold_patch_that_does_not_apply(filled_store: Path, tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", patch="diff --git a/shapes/area.py b/shapes/area.py\n"
                        "--- a/shapes/area.py\n+++ b/shapes/area.py\n@@ -1,2 +1,2 @@\n"
                        "-def nothing_like_this():\n+def other():\n     return 1\n")
    line = _bad_input(filled_store, "--suite", str(suite))
    assert "replay-demo__tiny-1: gold patch does not apply" in line


def test_python_version_that_cannot_be_found(filled_store: Path, tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    recipes = tmp_path / "environments"
    recipes.mkdir()
    (recipes / "replay-demo.toml").write_text(
        '[defaults]\npython = "3.99"\n\n[versions."1.0"]\n')
    line = _bad_input(filled_store, "--suite", str(suite),
                      env={"REPLAY_ENVIRONMENTS": str(recipes)})
    assert "no Python 3.99 found" in line


@pytest.mark.parametrize("where", ["file", "proc"])
def test_unwritable_store_path(tmp_path: Path, where: str) -> None:
    suite = write_suite(tmp_path / "suite")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    store = blocker / "replay.db" if where == "file" else Path("/proc/replay-store/replay.db")
    done = run_replay("validate", "--suite", str(suite), "--store", str(store))
    assert done.returncode == 2
    assert done.stderr.strip().startswith(f"error: cannot use the store {store}")
    assert len(done.stderr.strip().splitlines()) == 1
    assert blocker.read_text() == "not a folder"


def test_a_corrupt_store_file_is_refused_and_kept(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    store = tmp_path / "replay.db"
    store.write_bytes(b"this is not a database" * 100)
    done = run_replay("validate", "--suite", str(suite), "--store", str(store))
    assert done.returncode == 2 and "cannot use the store" in done.stderr
    assert store.read_bytes() == b"this is not a database" * 100
