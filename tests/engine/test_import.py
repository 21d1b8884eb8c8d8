"""`replay import` of one trajectory of each format, against a direct collection of its actions."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from replay.agent.loop import AgentConfig
from replay.environments.local import LocalBackend
from replay.histories.collect import collect_trajectory
from replay.histories.importers import read_trajectory
from replay.instances.records import load_suite
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.records.history import History
from replay.records.trajectory import Trajectory
from replay.store import Store
from replay.store.histories import load_history, load_trajectory, stored_histories

from conftest import make_client, run_replay
from paths import FIXTURES

FIXTURES = FIXTURES / "trajectories"
MINI = FIXTURES / "replay-demo__tally-1.traj.json"
SWE = FIXTURES / "replay-demo__tally-1.traj"
OPENAI = FIXTURES / "replay-demo__tally-1.openai.json"
TALLY = next(i for i in load_suite("demo").instances if i.instance_id == "replay-demo__tally-1")
CLEAN = (MINI, SWE, OPENAI)
RULES = ("steps:3", "before-edit", "fraction:1")


def import_files(store: Path, *args: str) -> CompletedProcess[str]:
    boundaries = [arg for rule in RULES for arg in ("--boundary", rule)]
    return run_replay("import", *args, *boundaries, "--store", str(store))


def histories(store: Path) -> dict[str, History]:
    """Stored histories by "FILE RULE"."""
    with Store.open(store) as opened:
        return {f"{row.source.split()[2]} {row.rule}": load_history(opened, row.id)
                for row in stored_histories(opened)}


def trajectory_of(store: Path, history: History) -> Trajectory:
    with Store.open(store) as opened:
        trajectory = load_trajectory(opened, history.trajectory)
    assert trajectory is not None
    return trajectory


def diverging_copy(folder: Path) -> Path:
    """The mini-swe-agent fixture with two recorded outputs that execution will not reproduce."""
    data = json.loads(MINI.read_text())
    first, fourth = data["messages"][3], data["messages"][9]
    first["content"] = first["content"].replace("8:from", "9:from")
    fourth["content"] = fourth["content"].replace("<returncode>0<", "<returncode>1<")
    path = folder / "diverging.traj.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CompletedProcess[str]]:
    """The three fixtures and a diverging copy of one, imported once into one store."""
    folder = tmp_path_factory.mktemp("import")
    store = folder / "replay.db"
    return store, import_files(store, str(MINI), str(SWE), str(OPENAI),
                               str(diverging_copy(folder)))


def test_each_format_imports_with_no_divergence(imported: tuple[Path, CompletedProcess]) -> None:
    store, done = imported
    assert done.returncode == 0, done.stdout + done.stderr
    assert " ".join(done.stdout.split()).count("imported /") == 4
    found = histories(store)
    files = (*CLEAN, Path("diverging.traj.json"))
    assert sorted(found) == sorted(f"{path.name} {rule}" for path in files for rule in RULES)
    for path in CLEAN:
        for rule in RULES:
            history = found[f"{path.name} {rule}"]
            assert history.divergences == [] and history.resolved is True
            assert history.boundary.step == {"steps:3": 3, "before-edit": 2,
                                                "fraction:1": len(read_trajectory(path).steps)
                                                }[rule]
    finals = {found[f"{path.name} fraction:1"].snapshot.fingerprint for path in CLEAN}
    assert len(finals) == 1
    mini = found[f"{MINI.name} steps:3"]
    assert mini.model == "anthropic/claude-sonnet-4-5-20250929"
    assert mini.source == f"imported mini-swe-agent {MINI.name}"
    assert mini.messages[-1]["role"] == "tool" and mini.messages[-2]["tool_calls"]


def direct_collection(path: Path, tmp_path: Path) -> Trajectory:
    """Collect a trajectory whose scripted agent takes the same actions as the file's."""
    recorded = read_trajectory(path)
    turns = [{"content": m["content"], "tool_calls": [
        {"function": {"name": c["function"]["name"],
                      "arguments": json.loads(c["function"]["arguments"])}}
        for c in m["tool_calls"]]} for m in recorded.messages if m["role"] == "assistant"]
    with ScriptedServer(Script(turns, model="agent")) as server, \
            Store.open(tmp_path / "direct.db") as store, \
            CallCache(tmp_path / "direct.db") as cache, \
            make_client(server.spec("agent"), cache) as client:
        result = collect_trajectory(TALLY, LocalBackend(), client, path.name, "agent",
                                    AgentConfig(max_steps=len(turns)), store)
    assert result.trajectory is not None, result.error
    return result.trajectory


def test_imported_snapshots_match_a_direct_collection_of_the_same_actions(
        imported: tuple[Path, CompletedProcess], tmp_path: Path) -> None:
    store, _ = imported
    found = histories(store)
    bash = direct_collection(MINI, tmp_path / "bash")
    tools = direct_collection(OPENAI, tmp_path / "tools")
    for path, direct in ((MINI, bash), (SWE, bash), (OPENAI, tools)):
        steps = trajectory_of(store, found[f"{path.name} steps:3"]).steps
        assert [s.fingerprint for s in steps] == [s.fingerprint for s in direct.steps], path
        assert [s.edited for s in steps] == [s.edited for s in direct.steps], path
    assert found[f"{OPENAI.name} steps:3"].snapshot.fingerprint == tools.steps[2].fingerprint


def test_importing_again_executes_nothing_and_stores_nothing_new(
        imported: tuple[Path, CompletedProcess]) -> None:
    store, _ = imported
    again = import_files(store, str(MINI), str(SWE), str(OPENAI))
    assert again.returncode == 0, again.stderr
    output = " ".join(again.stdout.split())
    assert output.count("(kept from an earlier import)") == 3
    assert output.count("(already kept)") == 3 * len(RULES)
    assert len(histories(store)) == 4 * len(RULES)


def test_outputs_that_differ_from_execution_are_reported_and_kept(
        imported: tuple[Path, CompletedProcess]) -> None:
    store, done = imported
    output = " ".join(done.stdout.split())
    assert output.count("recorded output(s) differ from execution") == 1
    assert "2 recorded output(s) differ from execution" in output
    assert ("diverged step 1: `grep -n 'CURRENCIES' tally/money.py`: output differs at line 1, "
            "column 1: recorded '9:from tally.currencies import CURRENCIES, Currency', "
            "got '8:from tally.currencies import CURRENCIES, Currency'") in output
    assert "diverged step 4: `python -c" in output and "exit code 0, recorded 1" in output
    found = histories(store)
    assert len(found["diverging.traj.json steps:3"].divergences) == 1
    full = found["diverging.traj.json fraction:1"]
    assert len(full.divergences) == 2 and full.divergences[1].startswith("step 4: `python -c")
    clean = found[f"{MINI.name} fraction:1"]
    assert full.snapshot.fingerprint == clean.snapshot.fingerprint


def _corrupt(tmp: Path) -> list[str]:
    path = tmp / "replay-demo__tally-1.traj.json"
    path.write_text(MINI.read_text()[:900])
    return [str(MINI), str(path)]


def _unknown_format(tmp: Path) -> list[str]:
    path = tmp / "episodes.json"
    path.write_text('{"episodes": [{"obs": "", "act": "ls"}]}')
    return [str(path)]


def _unknown_instance(tmp: Path) -> list[str]:
    data = json.loads(OPENAI.read_text())
    path = tmp / "run.json"
    path.write_text(json.dumps({**data, "instance_id": "replay-demo__nope-1"}))
    return [str(path)]


def _no_instance(tmp: Path) -> list[str]:
    path = tmp / "steps.json"
    path.write_text(json.dumps(json.loads(OPENAI.read_text())["messages"]))
    return [str(path)]


def _no_edit(tmp: Path) -> list[str]:
    data = json.loads(OPENAI.read_text())
    path = tmp / "looking.json"
    path.write_text(json.dumps({**data, "messages": data["messages"][:6]}))
    return [str(path)]


@pytest.mark.parametrize(("make", "extra", "message"), [
    (_unknown_format, [], "episodes.json: unknown trajectory format (expected mini-swe-agent, "
                          "swe-agent, openai; see docs/histories.md)"),
    (_corrupt, [], "replay-demo__tally-1.traj.json: not valid JSON (line 12: Unterminated string"),
    (lambda tmp: [str(OPENAI)], ["--instance", "replay-demo__iniconf-1"],
     "replay-demo__tally-1.openai.json: a trajectory of replay-demo__tally-1, not of "
     "replay-demo__iniconf-1"),
    (_unknown_instance, [], "run.json: unknown instance 'replay-demo__nope-1' in the chosen"),
    (_no_instance, [], "steps.json: unknown instance 'steps' (taken from the file name; pass "
                       "--instance)"),
    (lambda tmp: [str(MINI)], ["--boundary", "steps:9"],
     "boundary steps:9 is past the end of the trajectory (5 steps)"),
    (_no_edit, ["--boundary", "before-edit"],
     "replay-demo__tally-1: boundary before-edit is past the end of the trajectory: no step "
     "edits a non-test source file"),
])
def test_bad_input_is_one_line_and_leaves_nothing_behind(
        make: Callable[[Path], list[str]], extra: list[str], message: str,
        tmp_path: Path) -> None:
    store = tmp_path / "store" / "replay.db"
    done = run_replay("import", *make(tmp_path), *extra, "--store", str(store))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    if "before-edit" not in extra:  # the files are checked before the store is made
        assert not store.parent.exists()
        return
    # before-edit needs the actions executed: the store is made, and nothing is kept in it
    with sqlite3.connect(store) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        for table in {"trajectories", "histories"} & tables:
            assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
    assert not (store.parent / "artifacts").exists()
