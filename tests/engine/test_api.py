"""The public Python API: the example of docs/api.md runs as it is, against the demo suite and a
scripted model on 127.0.0.1, in its own process; and the API prints nothing itself."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from replay import api
from replay.core.errors import InputError

from paths import ROOT

API_PAGE = ROOT / "docs" / "api.md"


def readme_example() -> str:
    """The Python block of the Python API page (docs/api.md)."""
    section = API_PAGE.read_text(encoding="utf-8").split("# Python API", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, "docs/api.md has no python block"
    return found.group(1)


def test_the_readme_example_runs_a_sweep(tmp_path: Path) -> None:
    code = readme_example()
    assert len(code.strip().splitlines()) <= 12
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env={**os.environ})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    run, ran, labels = done.stdout.split(" ", 2)
    assert run.startswith("backbone-") and ran == "3"  # PRE once, POST per summarizer
    assert "'unsolved'" in labels and "anchor_index" in labels and "tail:4" in labels
    assert (tmp_path / "runs" / "api.db").is_file()


def test_bad_input_raises_before_any_store_is_made(tmp_path: Path) -> None:
    store = tmp_path / "r.db"
    options = api.CellOptions(arm="side", agent_model="openai:agent@http://127.0.0.1:9/v1")
    instance = api.instances("demo", ids=["replay-demo__tally-1"])[0]
    with pytest.raises(InputError, match=r"^unknown arm 'side': use pre or post$"):
        api.run_cell(instance, options, store)
    assert not store.exists()
