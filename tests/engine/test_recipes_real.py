"""A repository that had no hand-written recipe validates from swebench's spec alone
(pallets/flask 2.3: Python 3.11, requirements/dev.txt and its includes read from the mirror at the
row's environment_setup_commit). Needs a bare mirror of pallets/flask under REPLAY_REPO_MIRRORS
and PyPI (about a minute)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.core.paths import repo_mirrors_from_env
from replay.environments.repos import find_mirror

from conftest import VERIFIED_JSONL, needs_python, run_replay

MIRRORS = repo_mirrors_from_env()

pytestmark = [
    pytest.mark.mirror,
    pytest.mark.skipif(MIRRORS is None or find_mirror(MIRRORS, "pallets/flask") is None,
                       reason="needs a bare mirror of pallets/flask under REPLAY_REPO_MIRRORS "
                              "(git clone --mirror https://github.com/pallets/flask "
                              "DIR/pallets__flask.git)"),
    needs_python("3.11"),
]


def test_flask_validates_from_the_spec_alone(tmp_path: Path) -> None:
    table = tmp_path / "table.md"
    done = run_replay("recipes", "check", "--dataset", str(VERIFIED_JSONL), "--repo",
                      "pallets/flask", "--store", str(tmp_path / "r.db"), "--table", str(table))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid    pallets__flask-5014 (2.3," in done.stdout
    row = table.read_text().splitlines()[2]
    assert row == "| pallets/flask | 1 | 1 (1) | 1 | 1 of 1 (2.3) | - |"
