"""Imports that tell the truth, on real third-party trajectories (tests/fixtures/trajectories/real,
sources in its README): format and protocol recognition, SWE-agent's editor commands done as file
operations, benign and real divergences, a tree that contradicts its messages, boundaries refused
before anything runs. Executing a real trajectory needs a mirror of its repository: that part is
gated on REPLAY_REPO_MIRRORS, the rest runs everywhere."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from replay.core.paths import repo_mirrors_from_env
from replay.environments.repos import find_mirror
from replay.histories.importers import detect_format, read_trajectory
from replay.histories.importers.divergences import compare
from replay.histories.importers.recorded import Expected
from replay.store import Store
from replay.store.histories import load_history, stored_histories

from conftest import VERIFIED_JSONL, needs_python, run_replay
from paths import FIXTURES

REAL = FIXTURES / "trajectories" / "real"
MINI_V1 = REAL / "psf__requests-5414.mini-v1.traj.json"
MINI_V2 = REAL / "astropy__astropy-12907.mini-v2.traj.json"
SWE = REAL / "pydicom__pydicom-1458.swe-agent.traj"
DEMO_SWE = REAL.parent / "replay-demo__tally-1.traj"


def test_each_real_format_is_recognized_with_its_protocol() -> None:
    v1, v2, swe = read_trajectory(MINI_V1), read_trajectory(MINI_V2), read_trajectory(SWE)
    assert (v1.format, v1.instance_id, v1.model, v1.dialect, len(v1.steps)) == (
        "mini-swe-agent", "psf__requests-5414", "google/gemini-3-pro-preview",
        "mini-swe-agent-text", 8)
    assert json.loads(v1.messages[2]["tool_calls"][0]["function"]["arguments"]) == {
        "command": "ls -la"}
    assert v1.steps[0].actions[0].expected.text.startswith("total 156\n")
    assert (v2.format, v2.dialect, len(v2.steps)) == ("mini-swe-agent", "mini-swe-agent-tools", 6)
    assert all(a.tool == "bash" for s in v2.steps for a in s.actions)
    assert (swe.format, swe.instance_id, len(swe.steps)) == ("swe-agent", None, 12)
    tools = [step.actions[0].tool for step in swe.steps]
    assert tools[:2] == ["editor", "editor"] and tools[2] == "bash" and tools[-1] == "finish"
    assert tools[4] == "editor" and swe.steps[4].actions[0].arguments["command"].startswith(
        "open pydicom/pixel_data_handlers/numpy_handler.py")
    assert swe.submission and "numpy_handler.py" in swe.submission


def test_a_mini_swe_agent_file_from_before_v1_4_is_not_read_as_plain_messages(
        tmp_path: Path) -> None:
    """Before v1.4 a file named neither its format nor its version: the real v1 file with both
    removed, and its bare message list, are mini-swe-agent's text actions, executed on import."""
    data = json.loads(MINI_V1.read_text())
    del data["trajectory_format"], data["info"]["mini_version"]
    assert detect_format(data) == "mini-swe-agent"
    assert detect_format(data["messages"]) == "mini-swe-agent"
    del data["info"]
    path = tmp_path / "psf__requests-5414.traj.json"
    path.write_text(json.dumps(data))
    old = read_trajectory(path)
    assert old.format == "mini-swe-agent" and len(old.steps) == 8
    assert [a.tool for s in old.steps for a in s.actions] == ["bash"] * 8
    openai = json.loads(MINI_V2.read_text())["messages"]
    assert detect_format(openai) == "openai"


LS_RECORDED = ("total 156\ndrwxrwxrwx 1 root root  4096 Oct 24  2024 .\n"
               "-rw-r--r-- 1 root root    32 Oct 24  2024 .coveragerc\n")
LS_HERE = ("total 156\ndrwxr-xr-x 1 alice staff  4096 Dec  1 03:54 .\n"
           "-rw-r--r-- 1 alice staff    32 Dec  1 03:54 .coveragerc\n")


@pytest.mark.parametrize(("recorded", "executed", "command", "kinds"), [
    # a file's mode is the tree's (git records its executable bit); a folder's is not
    (LS_RECORDED, LS_RECORDED.replace("-rw-r--r--", "-rwxr-xr-x"), "ls -la", None),
    (LS_RECORDED, LS_RECORDED.replace("rwxrwxrwx", "rwxr-xr-x"), "ls -la",
     ("ls dates", "ls folder entries")),
    (LS_RECORDED, LS_HERE.replace("drwxr-xr-x", "drwxrwxrwx"), "ls -la", ("ls dates",)),
    ("3f2a9d88 Fix host\n", "3f2a9d8812 Fix host\n", "git log --oneline -1", (
        "git short-hash length",)),
    ('  File "/opt/miniconda3/envs/testbed/lib/python3.9/site-packages/idna/core.py", line 4',
     '  File "/root/.cache/replay/envs/9/lib/python3.9/site-packages/idna/core.py", line 4',
     "python3 reproduce_issue.py", ("interpreter paths",)),
    ("a.py:1:x\nb/c.py:2:x\n", "b/c.py:2:x\na.py:1:x\n", "grep -rn x .",
     ("line order of a recursive search",)),
    ("created /tmp/tmpa8x2k1_q at 2025-11-18 23:45:01", "created /tmp/tmpzz81op2w at "
     "2026-01-02 10:00:00", "python make.py", ("timestamps", "random nonces")),
])
def test_divergences_are_benign_only_where_the_run_not_the_repository_differs(
        recorded: str, executed: str, command: str, kinds: tuple[str, ...] | None) -> None:
    found = compare(Expected(recorded, 0), executed, 0, command)
    assert found is not None
    assert (set(found.benign) or None) == (set(kinds) if kinds else None)


def test_a_real_divergence_names_the_first_line_and_column_that_differ() -> None:
    recorded = "host = self._get_idna_encoded_host(host)\nexcept UnicodeError:\n    raise"
    executed = "host = self._get_idna_encoded_host(host)\nexcept UnicodeError as e:\n    raise"
    found = compare(Expected(recorded, 0), executed, 0, "sed -n '400,406p' requests/models.py")
    assert found is not None and not found.benign
    assert found.describe() == ("output differs at line 2, column 20: recorded "
                                "'except UnicodeError:', got 'except UnicodeError as e:'")


def _swe_editor_trajectory(tmp: Path) -> Path:
    """The demo SWE-agent trajectory with its edit done by SWE-agent's own editor commands: a
    rejected `edit`, an applied windowed `edit`, and `str_replace_editor`."""
    data = json.loads(DEMO_SWE.read_text())
    steps = data["trajectory"]
    opened = {"action": "open tally/money.py 8", "observation": "[File: /testbed/tally/money.py]",
              "thought": "Open it."}
    rejected = {"action": "edit 8:8\nfrom tally.currencies import Currency, lookup(\nend_of_edit",
                "observation": "Your proposed edit has introduced new syntax error(s).",
                "thought": "Fix the import."}
    applied = {"action": "edit 8:8\nfrom tally.currencies import Currency, lookup\nend_of_edit",
               "observation": "[File: /testbed/tally/money.py (60 lines total)]",
               "thought": "Fix the import."}
    replaced = {"action": "str_replace_editor str_replace /testbed/tally/money.py --old_str "
                          "'return CURRENCIES[code.strip().upper()]' "
                          "--new_str 'return lookup(code)'",
                "observation": "The file /testbed/tally/money.py has been edited.",
                "thought": "Use lookup."}
    data["trajectory"] = [*steps[:2], opened, rejected, applied, replaced, *steps[3:]]
    path = tmp / "replay-demo__tally-1.editor.traj"
    path.write_text(json.dumps(data))
    return path


def test_swe_agent_editor_commands_are_done_as_file_operations(tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    done = run_replay("import", str(_swe_editor_trajectory(tmp_path)), str(DEMO_SWE),
                      "--boundary", "fraction:1", "--store", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "diverged" not in done.stdout and "recorded as done" not in done.stdout
    with Store.open(store) as opened:
        found = [load_history(opened, row.id) for row in stored_histories(opened)]
    assert len(found) == 2 and all(h.resolved for h in found)
    assert found[0].snapshot.fingerprint == found[1].snapshot.fingerprint


def _contradicting(tmp: Path) -> Path:
    """The demo SWE-agent trajectory without its edit: it still submits the patch."""
    data = json.loads(DEMO_SWE.read_text())
    data["trajectory"] = [step for step in data["trajectory"] if "sed -i" not in step["action"]]
    path = tmp / "replay-demo__tally-1.traj"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("make", "boundary", "message"), [
    (_contradicting, "fraction:1", "the trajectory's tree contradicts its messages: it submitted "
                                   "changes to tally/money.py, but executing its actions left an "
                                   "unchanged tree"),
    (lambda tmp: DEMO_SWE, "tokens:90000000", "boundary tokens:90000000 is past the end of the "
                                              "trajectory: its context never reaches"),
])
def test_an_untruthful_import_is_refused_and_stores_nothing(make, boundary: str, message: str,
                                                            tmp_path: Path) -> None:
    store = tmp_path / "store" / "replay.db"
    done = run_replay("import", str(make(tmp_path)), "--boundary", boundary,
                      "--store", str(store))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    if not store.exists():  # bad input leaves no store at all
        return
    with sqlite3.connect(store) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        for table in {"trajectories", "histories"} & tables:
            assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


def _requests_mirror() -> Path | None:
    mirrors = repo_mirrors_from_env()
    return mirrors if mirrors and find_mirror(mirrors, "psf/requests") else None


@pytest.mark.mirror
@pytest.mark.skipif(_requests_mirror() is None, reason=(
    "executing a real trajectory needs a bare mirror of psf/requests: set REPLAY_REPO_MIRRORS=DIR "
    "with DIR/psf__requests.git (git clone --mirror https://github.com/psf/requests "
    "DIR/psf__requests.git)"))
@needs_python("3.9")
def test_a_real_mini_swe_agent_trajectory_imports_with_only_benign_divergences_at_first(
        tmp_path: Path) -> None:
    done = run_replay("import", str(MINI_V1), "--dataset", str(VERIFIED_JSONL), "--boundary",
                      "steps:3", "--store", str(tmp_path / "r.db"), "--repo-mirror",
                      str(_requests_mirror()))
    assert done.returncode == 0, done.stdout + done.stderr
    output = " ".join(done.stdout.split())
    # Step 1 lists /testbed. What the file system decides (dates, widths, folder modes and
    # sizes, the blocks total) is benign; the one real difference is the `build` folder the
    # SWE-bench image's install left there (ignored by git, so no mirror has it).
    step_1 = re.search(r"diverged step 1: `ls -la`: (.*?) diverged step 2", output)
    assert step_1 is None or step_1[1].startswith("benign (") or re.fullmatch(
        r"output differs at line \d+, column \d+: recorded '.*<date> build', got '.*'",
        step_1[1]), output
