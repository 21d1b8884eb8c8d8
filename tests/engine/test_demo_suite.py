"""The demo suite is real: every instance is a repair that pytest confirms, with a valid history.

For each instance in instances/demo: its files commit to `base_commit`; the gold patch applies;
with the test_patch alone every FAIL_TO_PASS test fails and every PASS_TO_PASS test passes; with
gold + test_patch all pass; the snapshot diff restores to the recorded fingerprint and leaves the
FAIL_TO_PASS tests failing. The histories are well-formed chat transcripts with tool calls. Real git
and real pytest, run in forked children of one process, about a second in all.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from replay.agent.tools import TOOL_NAMES
from replay.environments.repos import commit_files, git
from replay.environments.snapshots import fingerprint_script
from replay.histories.records import bundled_history
from replay.instances.records import Instance, load_suite

SUITE = load_suite("demo")
INSTANCES = {instance.instance_id: instance for instance in SUITE.instances}
IDS = list(INSTANCES)
REQUIRED_ARGUMENTS = {"bash": {"command"}, "read_file": {"path"}, "write_file": {"path", "content"},
                      "edit_file": {"path", "old", "new"}, "finish": set()}
RESULT_LINE = re.compile(r"^(PASSED|FAILED|ERROR) (\S+)", re.MULTILINE)


@dataclass
class Checked:
    """What the real git and pytest runs found for one instance."""

    commit: str
    tests_only: dict[str, str]
    gold: dict[str, str]
    snapshot: dict[str, str]
    fingerprint: str


def touched_tests(instance: Instance) -> list[str]:
    return sorted(set(re.findall(r"^\+\+\+ b/(\S+)", instance.test_patch, re.MULTILINE)))


def apply(tree: Path, patch: str | bytes, name: str) -> None:
    diff = tree / ".git" / name
    diff.write_bytes(patch if isinstance(patch, bytes) else patch.encode())
    done = git("apply", "--binary", "--whitespace=nowarn", str(diff), cwd=tree, check=False)
    assert done.returncode == 0, f"{name} does not apply in {tree}: {done.stderr}"


# Runs `pytest -rA` in several trees at once: pytest is imported once, then each run is a forked
# child with the tree as working directory and first on sys.path, as `python -m pytest` has it.
RUNNER = """
import importlib, json, os, sys
import pytest
from _pytest.config import default_plugins

for name in default_plugins:  # what every pytest.main would import again
    importlib.import_module("_pytest." + name)

children = []
for tree, files in json.loads(sys.argv[1]):
    pid = os.fork()
    if pid == 0:  # the child never returns to this loop
        code = 3
        try:
            log = os.open(os.path.join(tree, ".git", "pytest.log"), os.O_WRONLY | os.O_CREAT)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.chdir(tree)
            sys.path.insert(0, tree)
            code = int(pytest.main(["-rA", "-p", "no:cacheprovider", *files]))
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""


def run_pytest(jobs: list[tuple[Path, list[str]]]) -> list[dict[str, str]]:
    """Run the tests of each (tree, test files) job as the judge does; test id -> status."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    payload = json.dumps([(str(tree), files) for tree, files in jobs])
    subprocess.run([sys.executable, "-c", RUNNER, payload], env=env, timeout=120, check=True)
    logs = [(tree / ".git" / "pytest.log").read_text() for tree, _ in jobs]
    return [{test: status for status, test in RESULT_LINE.findall(log)} for log in logs]


def prepare(instance: Instance, root: Path) -> tuple[str, str, dict[str, Path]]:
    """The base commit, the snapshot's fingerprint, and the trees to test for `instance`."""
    assert instance.repo_files is not None
    history = bundled_history(instance)
    assert history is not None, f"{instance.instance_id} has no history.json"
    commit = commit_files(instance.repo_files, root / "base")
    trees = {"tests_only": root / "tests_only", "gold": root / "gold"}
    if history.snapshot.diff:
        trees["snapshot"] = root / "snapshot"
    for tree in trees.values():
        shutil.copytree(root / "base", tree)
    apply(trees["gold"], instance.patch, "gold.diff")
    restored = trees.get("snapshot", root / "base")
    if history.snapshot.diff:
        apply(restored, history.snapshot.diff, "snapshot.diff")
    fingerprint = subprocess.run(["bash", "-c", fingerprint_script(commit, str(root / "scratch"))],
                                 cwd=restored,
                                 capture_output=True, text=True, check=True).stdout.split()[-1]
    for tree in trees.values():
        apply(tree, instance.test_patch, "test.diff")
    return commit, fingerprint, trees


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Checked]:
    """Every instance's trees, tested in one batch of forked pytest runs."""
    root = tmp_path_factory.mktemp("demo-suite")
    with ThreadPoolExecutor(len(IDS)) as pool:
        found = pool.map(lambda ident: prepare(INSTANCES[ident], root / ident), IDS)
        prepared = dict(zip(IDS, found, strict=True))
    jobs = [(ident, name, tree) for ident, (_, _, trees) in prepared.items()
            for name, tree in trees.items()]
    results = run_pytest([(tree, touched_tests(INSTANCES[ident])) for ident, _, tree in jobs])
    statuses: dict[str, dict[str, dict[str, str]]] = {ident: {} for ident in IDS}
    for (ident, name, _), result in zip(jobs, results, strict=True):
        statuses[ident][name] = result
    return {
        ident: Checked(commit=commit, fingerprint=fingerprint,
                       tests_only=statuses[ident]["tests_only"], gold=statuses[ident]["gold"],
                       # An empty snapshot diff leaves the base tree: the same run as tests_only.
                       snapshot=statuses[ident].get("snapshot", statuses[ident]["tests_only"]))
        for ident, (commit, fingerprint, _) in prepared.items()
    }


def test_suite_lists_at_least_three_instances():
    assert len(IDS) >= 3
    assert SUITE.description and SUITE.rule
    for instance in SUITE.instances:
        assert instance.repo_files is not None and instance.repo_files.is_dir()
        assert not (instance.repo_files / ".git").exists()
        assert instance.environment_setup_commit == instance.base_commit
        assert instance.repo.startswith("replay-demo/")


@pytest.mark.parametrize("ident", IDS)
def test_files_commit_to_base_commit(ident: str, checked: dict[str, Checked]):
    assert checked[ident].commit == INSTANCES[ident].base_commit


@pytest.mark.parametrize("ident", IDS)
def test_instance_is_a_real_repair(ident: str, checked: dict[str, Checked]):
    instance, result = INSTANCES[ident], checked[ident]
    assert 1 <= len(instance.FAIL_TO_PASS) <= 3 and 3 <= len(instance.PASS_TO_PASS) <= 10
    assert all(path.startswith("tests/") for path in touched_tests(instance))
    gold_files = re.findall(r"^\+\+\+ b/(\S+)", instance.patch, re.MULTILINE)
    assert gold_files and not any(path.startswith("tests/") for path in gold_files)
    for test in instance.FAIL_TO_PASS:
        assert result.tests_only.get(test, "missing") != "PASSED", f"{test} passes without gold"
        assert result.gold.get(test) == "PASSED", f"{test} does not pass with the gold patch"
    for test in instance.PASS_TO_PASS:
        assert result.tests_only.get(test) == "PASSED", f"{test} fails before the fix"
        assert result.gold.get(test) == "PASSED", f"{test} fails with the gold patch"
    assert set(result.gold.values()) == {"PASSED"}


@pytest.mark.parametrize("ident", IDS)
def test_snapshot_restores_and_repair_is_unfinished(ident: str, checked: dict[str, Checked]):
    instance, result = INSTANCES[ident], checked[ident]
    history = bundled_history(instance)
    assert history is not None
    assert history.snapshot.base_commit == instance.base_commit
    assert result.fingerprint == history.snapshot.fingerprint
    for test in instance.FAIL_TO_PASS:
        assert result.snapshot.get(test, "missing") != "PASSED", f"{test} passes at the boundary"
    for test in instance.PASS_TO_PASS:
        assert result.snapshot.get(test) == "PASSED", f"{test} fails at the boundary"


@pytest.mark.parametrize("ident", IDS)
def test_history_is_a_valid_transcript(ident: str):
    instance = INSTANCES[ident]
    history = bundled_history(instance)
    assert history is not None
    messages = history.messages
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    assert instance.problem_statement.strip() in messages[1]["content"]
    assert "/testbed" in messages[1]["content"]
    pending: set[str] = set()
    seen: set[str] = set()
    steps = 0
    for message in messages[2:]:
        if message["role"] == "assistant":
            assert not pending, f"tool calls without results: {pending}"
            steps += 1
            for call in message.get("tool_calls") or []:
                assert call["type"] == "function" and call["id"] not in seen
                name = call["function"]["name"]
                assert name in TOOL_NAMES
                arguments = json.loads(call["function"]["arguments"])
                assert isinstance(arguments, dict)
                assert REQUIRED_ARGUMENTS.get(name, set()) <= set(arguments)
                if "path" in arguments:
                    assert arguments["path"].startswith("/testbed/")
                pending.add(call["id"])
                seen.add(call["id"])
        else:
            assert message["role"] == "tool" and message["tool_call_id"] in pending
            assert isinstance(message["content"], str) and message["content"]
            pending.remove(message["tool_call_id"])
    assert not pending, f"tool calls without results: {pending}"
    assert 6 <= steps <= 12
    assert history.boundary.step == steps and history.boundary.rule == f"steps:{steps}"


def test_instances_cover_the_three_boundary_kinds():
    """A partial edit with an untracked file; a fact deep in a long output; an error message."""
    kinds = set()
    for instance in SUITE.instances:
        history = bundled_history(instance)
        assert history is not None
        outputs = [m["content"] for m in history.messages if m["role"] == "tool"]
        if b"new file mode" in history.snapshot.diff and b"\n-" in history.snapshot.diff:
            kinds.add("partial edit")
        elif max(len(text.splitlines()) for text in outputs) >= 250:
            kinds.add("long output")
        elif any(re.search(r"^[\w.]+Error: ", text, re.MULTILINE) for text in outputs):
            kinds.add("error message")
    assert kinds == {"partial edit", "long output", "error message"}
