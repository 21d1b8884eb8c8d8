"""Test timeouts, as a user meets them: the tiny instance on the real local backend, a scripted
agent on 127.0.0.1 whose edit makes a test hang, `--test-timeout`, the default derived from
validation, and the timed-out mark through the grid, the report and the exports; and the
hangs that are not the agent's (the validated tests themselves), which are never labels."""

from __future__ import annotations

import csv
import json
import sqlite3
import time
from pathlib import Path

import pytest

from replay.agent.loop import task_messages
from replay.core.paths import TESTBED
from replay.environments import snapshots
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.histories.records import DIFF_FILE, HISTORY_FILE, history_record
from replay.instances.records import load_instance_dir
from replay.judge.timeouts import TIMEOUT_FACTOR, TIMEOUT_FLOOR, derived_timeout, gold_seconds
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.records.history import History
from replay.records.validation import Validation
from replay.store import Store, validations
from replay.store.runs import load_cells, load_run

from agent_scripts import FIX, call
from conftest import BACKENDS, TINY_TEST_PATCH, bash_call, run_replay, write_tiny_instance
from sweep_scripts import RESUMED, fixture_prompts, models_file

TINY = "replay-demo__tiny-1"
HANG = ("printf 'def rectangle(width, height):\\n    return width * height\\n\\n\\n"
        "def square(side):\\n    while True:\\n        pass\\n' > shapes/area.py")
HANGING = {"content": "Rewriting.", "tool_calls": [call("bash", command=HANG),
                                                   call("finish", summary="rewrote it")]}
FIXING = {"content": "Fixing.", "tool_calls": [call("bash", command=FIX),
                                               call("finish", summary="fixed")]}
SUMMARY = {"content": "<summary>square() in shapes/area.py cubes; make it side * side.</summary>"}
SLOW = 3  # seconds the slow suite's new test sleeps, with or without the fix


def write_suite(root: Path, **overrides: object) -> Path:
    """A suite folder holding the tiny instance (fields overridden) and a one-step tool-calls
    history of it at the base commit."""
    folder = write_tiny_instance(root / TINY, **overrides)
    instance = load_instance_dir(folder)
    env = LocalBackend().start(instance, load_recipe(instance))
    snapshot = snapshots.at_base(env, instance.base_commit)
    messages = [*task_messages(instance.problem_statement, TESTBED),
                {"role": "assistant", "content": "Reading.",
                 "tool_calls": [bash_call("call_1", "cat shapes/area.py")]},
                {"role": "tool", "tool_call_id": "call_1", "content": "def square(side): ..."}]
    history = History(instance_id=TINY, messages=messages, snapshot=snapshot,
                      boundary={"rule": "steps:1", "step": 1, "tokens": 300}, model="collector",
                      source="test")
    (folder / HISTORY_FILE).write_text(json.dumps(history_record(history), indent=1))
    (folder / DIFF_FILE).write_bytes(snapshot.diff)
    (root / "suite.toml").write_text(f'description = "tiny"\ninstances = ["{TINY}"]\n')
    return root


def sleeping_test_patch(where: str) -> str:
    """TINY_TEST_PATCH whose new test first sleeps: `where` is the sleep's line."""
    return TINY_TEST_PATCH.replace(
        "@@ -1,5 +1,9 @@", "@@ -1,5 +1,12 @@").replace(
        "+from shapes.area import rectangle, square\n",
        "+import time\n+\n+from shapes.area import rectangle, square\n").replace(
        "+def test_square():\n", f"+def test_square():\n+    {where}\n")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_suite(tmp_path_factory.mktemp("hang"))


def validation(store: Path) -> Validation:
    """The one verdict the store at `store` keeps."""
    with Store.open_read_only(store) as opened:
        found = validations.find(opened, TINY, "local")
    assert found is not None
    return found


def test_a_hang_the_agent_made_is_cut_at_the_timeout_and_marked_everywhere(
        suite: Path, tmp_path: Path) -> None:
    store, catalogue = tmp_path / "runs" / "replay.db", fixture_prompts(tmp_path)
    done = run_replay("validate", "--suite", str(suite), "--store", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    gold = gold_seconds(validation(store))
    assert gold is not None and 0 < gold < TIMEOUT_FLOOR
    assert f"{derived_timeout(gold):g} s" in done.stdout  # the cells' timeout, in the table
    scripts = [Script([HANGING], model="agent", contains=RESUMED), Script([FIXING], model="agent"),
               Script([SUMMARY], model="summ-a")]
    with ScriptedServer(*scripts) as server:
        env = models_file(tmp_path, server.base_url)
        # PRE alone, with the default: derived from the validated gold run, and it passes
        pre = run_replay("cell", "--instance", TINY, "--arm", "pre", "--agent-model", "agent",
                         "--suite", str(suite), "--store", str(store), env=env)
        assert pre.returncode == 0 and "tests pass" in pre.stdout, pre.stdout + pre.stderr
        (grade,) = [json.loads(row[0]) for row in sqlite3.connect(store).execute(
            "SELECT grade FROM continuations")]
        assert grade["timeout"] == max(TIMEOUT_FLOOR, TIMEOUT_FACTOR * gold) and not (
            grade["timed_out"])
        started = time.monotonic()
        sweep = ["backbone", "--agent-model", "agent", "--model", "summ-a", "--suite", str(suite),
                 "--store", str(store), "--prompt-sources", str(catalogue), "--run", "hang"]
        done = run_replay(*sweep, "--test-timeout", "4", env=env)
        took = time.monotonic() - started
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 kept from the store, 0 error(s), 1 with tests timed out" in done.stdout
        assert ("post summ-a:claude-code seed 0: fail (tests timed out after 4 s)"
                in done.stdout)
        again = run_replay(*sweep, "--test-timeout", "9", env=env)
        confirm = run_replay("confirm", "hang", "--store", str(store), "--test-timeout", "9",
                             env=env)
        resumed = run_replay(*sweep, env=env)
    for refused in (again, confirm):
        assert refused.returncode == 2 and refused.stderr.strip() == (
            "error: run 'hang' keeps the test timeout it began with, 4 s, not --test-timeout 9: "
            "resume it without --test-timeout, or choose another --run name")
    assert resumed.returncode == 0 and "nothing ran, no model was called" in resumed.stdout
    assert "│   DT   │" in done.stdout and "T tests timed out" in done.stdout
    assert (f"T tests timed out (a failing run of the agent's tree): 1 cell(s), "
            f"{TINY} post summ-a:claude-code seed 0 after 4 s") in done.stdout
    with Store.open(store) as opened:
        plan = load_run(opened, "hang")
        cells = load_cells(opened, "hang")
    assert plan is not None and plan.test_timeout == 4
    post = next(cell for cell in cells.values() if cell.cell.arm == "post")
    assert (post.status, post.passed, post.timed_out) == ("done", False, 4)
    kept = json.loads(sqlite3.connect(store).execute(
        "SELECT grade FROM continuations WHERE key=?", (post.continuation,)).fetchone()[0])
    assert kept["timed_out"] and 4 <= kept["duration"] < 4 + 3, kept["duration"]
    assert took < 60, took  # the sweep: validation kept, PRE kept, the POST's step and tests
    log = (store.parent / "artifacts" / "continuations" / post.continuation[:24] / "tests.log")
    assert log.read_text().rstrip().endswith(">>>>> Tests Timed Out after 4 s")
    assert_exports(store, "hang")


def assert_exports(store: Path, run: str) -> None:
    """`replay report` of the run: the grid, report.md, report.json and cells.csv say that its
    POST timed out after 4 s."""
    report = run_replay("report", run, "--store", str(store))
    assert report.returncode == 0 and "│   DT   │" in report.stdout
    folder = store.parent / "reports" / run
    markdown = (folder / "report.md").read_text()
    assert f"| {TINY} | DT |" in markdown
    assert "T tests timed out (a failing run of the agent's tree): 1 cell(s), " in markdown
    exported = json.loads((folder / "report.json").read_text())
    assert [o["timed_out"] for o in exported["outcomes"]] == ["POST tests timed out after 4 s"]
    assert exported["outcomes"][0]["label"] == "damaged"
    rows = list(csv.DictReader((folder / "cells.csv").open()))
    assert {(row["arm"], row["result"], row["timed_out"]) for row in rows} == {
        ("pre", "pass", ""), ("post", "fail", "4 s")}


@pytest.mark.parametrize("backend", BACKENDS)
def test_replay_run_says_the_tests_timed_out(backend: str, suite: Path, tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    with ScriptedServer(Script([HANGING], model="agent")) as server:
        done = run_replay("cell", "--instance", TINY, "--arm", "pre", "--agent-model",
                          f"openai:agent@{server.base_url}", "--suite", str(suite), "--store",
                          str(store), "--test-timeout", "3", "--backend", backend)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{TINY} pre: tests timed out after 3 s" in done.stdout
    (grade,) = [json.loads(row[0]) for row in sqlite3.connect(store).execute(
        "SELECT grade FROM continuations")]
    assert grade["timed_out"] and 3 <= grade["duration"] < 3 + 3, grade["duration"]


def test_validated_tests_that_hang_are_a_harness_fault_never_a_verdict(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", test_patch=sleeping_test_patch("time.sleep(600)"))
    store = tmp_path / "replay.db"
    started = time.monotonic()
    done = run_replay("validate", "--suite", str(suite), "--store", str(store),
                      "--test-timeout", "2")
    took = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the tests timed out after 2 s with the gold patch" in done.stdout
    found = validation(store)
    assert found.status == "error" and found.checks["with_gold"]["timed_out"]
    assert found.checks["without_fix"]["timed_out"] and gold_seconds(found) is None
    assert took < 2 * 2 + 40, took


def test_a_timeout_shorter_than_the_validated_tests_is_an_error(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", test_patch=sleeping_test_patch(f"time.sleep({SLOW})"))
    store = tmp_path / "replay.db"
    done = run_replay("validate", "--suite", str(suite), "--store", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    gold = gold_seconds(validation(store))
    assert gold is not None and gold >= SLOW
    with ScriptedServer(Script([FIXING], model="agent")) as server:
        agent = f"openai:agent@{server.base_url}"
        args = ["cell", "--instance", TINY, "--arm", "pre", "--agent-model", agent, "--suite",
                str(suite), "--store", str(store)]
        short = run_replay(*args, "--test-timeout", "1")
        enough = run_replay(*args)
    assert short.returncode == 1, short.stdout + short.stderr
    assert (f"{TINY} pre: error harness: the tests timed out after 1 s, shorter than the "
            f"{gold:g} s the gold patch's test run took in validation") in short.stdout
    # the same continuation under the derived default runs its tests again, and passes
    assert enough.returncode == 0 and "tests pass" in enough.stdout, enough.stdout


def test_collect_grades_its_trajectory_under_the_timeout(suite: Path, tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    with ScriptedServer(Script([HANGING], model="agent")) as server:
        started = time.monotonic()
        done = run_replay("collect", "--model", f"openai:agent@{server.base_url}", "--suite",
                          str(suite), "--boundary", "steps:1", "--store", str(store),
                          "--test-timeout", "3")
        took = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"collected {TINY}: 1 steps, finished, not resolved" in done.stdout
    (grade,) = (store.parent / "artifacts" / "trajectories").glob("*/grade.json")
    found = json.loads(grade.read_text())
    assert (found["timed_out"], found["timeout"]) == (True, 3) and took < 3 + 40, took
