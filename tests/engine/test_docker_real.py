"""The three real SWE-bench instances grade the same in docker as locally (needs mirrors + Docker).

Enable with REPLAY_REPO_MIRRORS=DIR (bare mirrors of psf/requests and pytest-dev/pytest, see
tests/engine/test_real_instances.py) and a Docker Engine with the base image (`bash
scripts/docker-engine.sh && bash scripts/build-base-image.sh`). The first run builds the images
(PyPI access needed, about a minute); psf__requests-5414 needs 10.255.255.1 to time out inside
the network-less container.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from replay.instances.records import load_dataset, select
from replay.judge.grading import grade_log

from conftest import REAL, VERIFIED_JSONL, docker_problem, needs_python, real_mirrors, run_replay

PROBLEM = docker_problem()
pytestmark = [
    pytest.mark.mirror,
    pytest.mark.skipif(
        real_mirrors() is None,
        reason="needs bare mirrors of psf/requests and pytest-dev/pytest: set "
               "REPLAY_REPO_MIRRORS=DIR with DIR/psf__requests.git and DIR/pytest-dev__pytest.git"),
    pytest.mark.skipif(PROBLEM is not None, reason=str(PROBLEM)),
    needs_python("3.9"),
]


def _validate(backend: str, store: Path) -> dict[str, dict]:
    args = ["validate", "--backend", backend, "--dataset", str(VERIFIED_JSONL), "--store",
            str(store), "--repo-mirror", str(real_mirrors())]
    for instance_id in REAL:
        args += ["--instance", instance_id]
    done = run_replay(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return {instance_id: json.loads(checks) for instance_id, checks in sqlite3.connect(
        store).execute("SELECT instance_id, checks FROM validations")}


def test_the_three_real_instances_grade_the_same_in_docker_as_locally(tmp_path: Path) -> None:
    rows = {row.instance_id: row for row in select(load_dataset(VERIFIED_JSONL), ids=REAL)}
    found = {backend: _validate(backend, tmp_path / f"{backend}.db")
             for backend in ("local", "docker")}
    for instance_id in REAL:
        for run in ("without_fix", "with_gold"):
            docker_log, local_log = (Path(found[backend][instance_id][run]["log"]).read_text()
                                     for backend in ("docker", "local"))
            statuses = grade_log(rows[instance_id], docker_log).statuses
            assert statuses, (instance_id, run)
            assert statuses == grade_log(rows[instance_id], local_log).statuses, (instance_id, run)
