"""Real SWE-bench instances validate through the local backend (needs repository mirrors).

Enable with REPLAY_REPO_MIRRORS=DIR, where DIR holds bare mirrors with full history, e.g.
`git clone --mirror https://github.com/psf/requests DIR/psf__requests.git` and the same for
pytest-dev/pytest. Each instance builds its environment once (PyPI access needed, ~30 s).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import REAL, VERIFIED_JSONL, needs_python, real_mirrors, run_replay

pytestmark = [
    pytest.mark.mirror,
    pytest.mark.skipif(
        real_mirrors() is None,
        reason="needs bare mirrors of psf/requests and pytest-dev/pytest: set "
               "REPLAY_REPO_MIRRORS=DIR with DIR/psf__requests.git and DIR/pytest-dev__pytest.git "
               "(git clone --mirror https://github.com/OWNER/NAME DIR/OWNER__NAME.git)"),
    needs_python("3.9"),
]


def test_the_three_real_instances_are_valid(tmp_path: Path) -> None:
    args = ["validate", "--dataset", str(VERIFIED_JSONL), "--store", str(tmp_path / "r.db"),
            "--repo-mirror", str(real_mirrors())]
    for instance_id in REAL:
        args += ["--instance", instance_id]
    done = run_replay(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = dict(sqlite3.connect(tmp_path / "r.db").execute(
        "SELECT instance_id, checks FROM validations").fetchall())
    assert sorted(rows) == sorted(REAL)
    for instance_id, checks in rows.items():
        checks = json.loads(checks)
        assert checks["real_repair"] and checks["solvable"] and checks["restore_identical"], \
            instance_id
        assert checks["without_fix"]["fail_to_pass"]["success"] == []
        assert checks["with_gold"]["pass_to_pass"]["failure"] == []
