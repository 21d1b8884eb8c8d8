"""The bundled compact-bench suite: real SWE-bench Verified rows, chosen by its written rule, each
with a Phase A history imported from a published mini-swe-agent trajectory.

The rule is checked against the real dataset rows (../shared/swebench); the histories are read
as the engine reads them. Validating the whole suite and running it need the repositories'
mirrors (REPLAY_REPO_MIRRORS) and are skipped without them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from replay.core.paths import instances_dir, repo_mirrors_from_env
from replay.environments.repos import find_mirror
from replay.histories.records import HISTORY_FILE, load_history_file
from replay.instances.records import load_dataset, load_suite

from conftest import VERIFIED_JSONL
from paths import ROOT

SCRIPTS = ROOT / "scripts"
PROVENANCE = ("repository", "commit", "path", "sha256", "model", "agent", "license")


def _build_script():
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location("build_compact_bench",
                                                      SCRIPTS / "build_compact_bench.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


@pytest.fixture(scope="module")
def suite():
    return load_suite("compact-bench", str(VERIFIED_JSONL))


@pytest.fixture(scope="module")
def rule():
    return _build_script()


def test_the_suite_is_what_its_rule_chose(suite, rule) -> None:
    ids = [row.instance_id for row in suite.instances]
    repos = {row.repo for row in suite.instances}
    assert set(rule.STUDY) <= set(ids)
    assert len(ids) <= rule.TOTAL and len(set(ids)) == len(ids)
    assert len(repos) >= 7
    for repo in repos:
        assert sum(row.repo == repo for row in suite.instances) <= rule.PER_REPO
    for row in suite.instances:
        if row.instance_id not in rule.STUDY:
            assert rule.static_reason(row) == "", row.instance_id
    # The kept rows appear in the order the rule walks the dataset, and SELECTION.md says why
    # every row before the last kept one was set aside.
    walked = [row.instance_id for row in rule.turns(load_dataset(str(VERIFIED_JSONL)))]
    assert [ident for ident in walked if ident in set(ids)] == ids
    selection = (instances_dir() / "compact-bench" / "SELECTION.md").read_text()
    kept = re.findall(r"\| \d+ \| (\S+) \| \*\*kept\*\*", selection)
    assert kept == ids
    assert "set aside" in selection
    assert suite.rule and "sha256(instance id)" in suite.rule


def test_rule_conditions_on_real_rows(rule) -> None:
    assert rule.is_test_path("astropy/modeling/tests/test_separable.py")
    assert rule.is_test_path("testing/test_capture.py") and rule.is_test_path("conftest.py")
    assert not rule.is_test_path("src/_pytest/capture.py")
    verified = load_dataset(str(VERIFIED_JSONL))
    by_id = {row.instance_id: row for row in verified}
    assert rule.static_reason(by_id["astropy__astropy-12907"]) == ""
    two_files = next(row for row in verified if len(rule.changed_files(row.patch)) == 2)
    assert rule.static_reason(two_files) == "gold patch changes 2 files"
    many = next(row for row in verified if len(row.FAIL_TO_PASS) > 10
                and len(rule.changed_files(row.patch)) == 1
                and not rule.is_test_path(rule.changed_files(row.patch)[0]))
    assert rule.static_reason(many) == f"{len(many.FAIL_TO_PASS)} FAIL_TO_PASS tests (over 10)"


def test_every_history_is_real_and_carries_provenance(suite) -> None:
    for row in suite.instances:
        path = instances_dir() / "compact-bench" / row.instance_id / HISTORY_FILE
        history = load_history_file(path)
        assert history.instance_id == row.instance_id
        assert history.snapshot.base_commit == row.base_commit
        assert history.boundary.rule == "before-edit" and history.boundary.step >= 3
        assert history.dialect == "mini-swe-agent-text"
        provenance = json.loads(path.read_text())["provenance"]
        assert set(PROVENANCE) <= set(provenance)
        assert re.fullmatch(r"[0-9a-f]{40}", provenance["commit"])
        assert re.fullmatch(r"[0-9a-f]{64}", provenance["sha256"])
        assert provenance["path"].endswith(f"{row.instance_id}/{row.instance_id}.traj.json")
        # A mini-swe-agent history: its system prompt asks for one bash block per answer, and
        # the task names the submit sentinel.
        assert history.messages[0]["role"] == "system"
        assert "```bash" in history.messages[0]["content"]
        assert any("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in str(m.get("content"))
                   for m in history.messages[:2])


def _suite_mirrors(suite) -> Path | None:
    return _mirrors({row.repo for row in suite.instances})


def _mirrors(repos: set[str]) -> Path | None:
    """The folder of bare mirrors (REPLAY_REPO_MIRRORS) when it holds each of `repos`."""
    mirrors = repo_mirrors_from_env()
    if mirrors is None or any(find_mirror(mirrors, repo) is None for repo in repos):
        return None
    return mirrors


def test_the_suite_validates_offline(suite, tmp_path) -> None:
    mirrors = _suite_mirrors(suite)
    if mirrors is None:
        pytest.skip("needs bare mirrors of every compact-bench repository: set "
                    "REPLAY_REPO_MIRRORS to their folder")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "replay"), "validate", "--suite", "compact-bench",
         "--dataset", str(VERIFIED_JSONL), "--repo-mirror", str(mirrors),
         "--store", str(tmp_path / "replay.db")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    assert done.stdout.count("\nvalid ") + done.stdout.startswith("valid ") == \
        len(suite.instances)


def _check(backend: str, store: Path) -> subprocess.CompletedProcess[str]:
    """scripts/compact_bench_check.py on psf__requests-5414, which needs the requests mirror."""
    mirrors = _mirrors({"psf/requests"})
    if mirrors is None:
        pytest.skip("needs a bare mirror of psf/requests: set REPLAY_REPO_MIRRORS to the "
                    "folder that holds it")
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "compact_bench_check.py"), "--backend", backend,
         "--dataset", str(VERIFIED_JSONL), "--repo-mirror", str(mirrors),
         "--store", str(store), "--instance", "psf__requests-5414"],
        capture_output=True, text=True, check=False, env={**os.environ, "COLUMNS": "400"})


@pytest.mark.parametrize("backend", ["local", "docker"])
def test_a_suite_instance_runs_every_cell(backend, tmp_path) -> None:
    """The real command on a real instance of the suite, with scripted models on loopback: PRE
    applies the gold patch and passes, POST submits unchanged and fails (scripts/
    compact_bench_check.py), so the instance is labelled damaged on either backend."""
    from conftest import docker_problem

    if backend == "docker" and docker_problem():
        pytest.skip(docker_problem())
    done = _check(backend, tmp_path / "replay.db")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 cells; labels {'damaged': 1}" in done.stdout
    assert "gruckion/mini-swe-agent@d12a71af" in done.stdout


def test_every_call_of_a_compact_bench_cell_is_listed(tmp_path) -> None:
    """Every model call of a real compact-bench cell (a mini-swe-agent history: its agent
    sends no tools) is kept with the cell by its key and listed by `replay report --cells` and
    the web view: PRE's step, POST's summary and step (issue 22: the view missed them all)."""
    from replay.report.tables import build
    from replay.report.web.data import cell_view, read_store

    store = tmp_path / "replay.db"
    done = _check("local", store)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    cells = subprocess.run([str(Path(sys.executable).parent / "replay"), "report",
                            "check-local", "--cells", "--store", str(store)],
                           capture_output=True, text=True, check=False,
                           env={**os.environ, "COLUMNS": "400"})
    assert cells.returncode == 0, cells.stdout + cells.stderr
    with read_store(store, "check-local") as (kept, run):
        report = build(kept, run)
        view = cell_view(kept, report, "psf__requests-5414", report.plan.summarizers[0], 0)
    listed = [call for calls in report.calls.values() for call in calls]
    assert [(call.arm, call.what) for call in view.calls] == [
        ("pre", "step 1"), ("post", "summary"), ("post", "step 1")]
    assert len(listed) == 3 and all(call.found for call in listed)
    assert [call.model for call in view.calls] == ["agent", "summarizer", "agent"]
    table = cells.stdout[cells.stdout.index("model calls per cell"):]
    assert table.count("step 1") == 2 and table.count("summary") >= 1
    assert "not in the store" not in table
