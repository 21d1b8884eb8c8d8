"""Sweeps choose histories and record them in the run: a dataset-backed suite whose instance
ships a mini-swe-agent history (rows from a dataset file, the repository from a bare mirror),
stored histories chosen by id or rule, resumes that keep the choice, bad choices refused; real
sweeps on the local backend with a scripted model server."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from replay.agent.loop import task_messages
from replay.core.paths import TESTBED
from replay.environments import snapshots
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.environments.repos import commit_files, git
from replay.histories.records import (
    DIFF_FILE,
    HISTORY_FILE,
    bundled_history,
    history_record,
    load_history_file,
)
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.records.history import History
from replay.records.plan import Plan, PlannedHistory
from replay.records.snapshot import Snapshot
from replay.report.tables import build
from replay.store import Store, runs
from replay.store import histories as history_table
from replay.store.runs import load_run, save_run
from replay.sweep.plan import bind_run

from agent_scripts import FIX, PROVENANCE, call, mini_agent, mini_history
from conftest import bash_call, replay_here, run_replay, write_tiny_instance
from sweep_scripts import fixture_prompts, models_file

TINY = "replay-demo__tiny-1"
SUMMARY = {"content": "<summary>square() in shapes/area.py cubes; make it side * side.</summary>"}
TOOL_FIX = {"content": "Fixing.", "tool_calls": [call("bash", command=FIX),
                                                 call("finish", summary="fixed")]}


@dataclass(frozen=True)
class Bench:
    """A dataset-backed suite of the tiny instance, its rows, a mirror, and the base snapshot."""

    suite: Path
    rows: Path
    mirrors: Path
    snapshot: Snapshot
    bundled: str  # the content id of the bundled history


@pytest.fixture(scope="module")
def bench(tiny: Instance, tmp_path_factory: pytest.TempPathFactory) -> Bench:
    root = tmp_path_factory.mktemp("bench")
    source = write_tiny_instance(root / "source")
    record = json.loads((source / "instance.json").read_text())
    commit_files(source / "repo", root / "work")
    mirror = root / "mirrors" / "replay-demo__tiny.git"
    git("init", "-q", "--bare", str(mirror))
    git("push", "-q", str(mirror), "HEAD:refs/heads/main", cwd=root / "work")
    rows = root / "rows.jsonl"
    rows.write_text("".join(json.dumps({**row, "instance_id": ident}) + "\n"
                            for row, ident in ((record, TINY), (record, "replay-demo__tiny-2"))))
    env = LocalBackend().start(tiny, load_recipe(tiny))
    snapshot = snapshots.at_base(env, tiny.base_commit)
    suite = root / "bench"
    (suite / TINY).mkdir(parents=True)
    (suite / "suite.toml").write_text(
        'description = "the tiny instance, rows from a dataset"\n'
        'dataset = "rows-not-shipped.jsonl"\n'
        f'instances = ["{TINY}"]\n')
    history = mini_history(TINY, record["problem_statement"], snapshot)
    (suite / TINY / HISTORY_FILE).write_text(json.dumps(history_record(history), indent=1))
    (suite / TINY / DIFF_FILE).write_bytes(snapshot.diff)
    return Bench(suite, rows, root / "mirrors", snapshot, history.content_id())


def tools_history(instance_id: str, thought: str, rule: str, snapshot: Snapshot) -> History:
    """A one-step tool-calls history of the tiny instance (its issue, replay's prompts)."""
    messages = [*task_messages("square(3) returns 27 instead of 9.", TESTBED),
                {"role": "assistant", "content": thought,
                 "tool_calls": [bash_call("call_1", "cat shapes/area.py")]},
                {"role": "tool", "tool_call_id": "call_1", "content": "def square(side): ..."}]
    return History(instance_id=instance_id, messages=messages, snapshot=snapshot,
                   boundary={"rule": rule, "step": 1, "tokens": 300}, model="collector",
                   source="replay collect (test)")


def stored(store_path: Path, snapshot: Snapshot) -> dict[str, str]:
    """Stored histories: two cut by steps:2 and one by before-edit for the tiny instance, and
    one of an instance outside the suite; returns their content ids by name."""
    histories = {"first": tools_history(TINY, "Reading (A).", "steps:2", snapshot),
                 "second": tools_history(TINY, "Reading (B).", "steps:2", snapshot),
                 "edit": tools_history(TINY, "Reading (C).", "before-edit", snapshot),
                 "other": tools_history("replay-demo__tally-1", "Reading.", "steps:2", snapshot)}
    with Store.open(store_path) as store:
        history_table.keep(store, list(histories.values()))
    return {name: found.content_id() for name, found in histories.items()}


def backbone(bench: Bench, store: Path, catalogue: Path, *args: str) -> list[str]:
    """The arguments of `replay backbone` of summ-a on the bench's suite."""
    return ["backbone", "--agent-model", "agent", "--model", "summ-a", "--suite",
            str(bench.suite), "--dataset", str(bench.rows), "--repo-mirror", str(bench.mirrors),
            "--store", str(store), "--prompt-sources", str(catalogue), *args]


def sweep(bench: Bench, env: dict[str, str], store: Path, catalogue: Path,
          *args: str) -> subprocess.CompletedProcess[str]:
    return run_replay(*backbone(bench, store, catalogue, *args), env=env)


def test_a_dataset_backed_suite_reads_the_suites_ids_from_the_dataset_with_their_bundles(
        bench: Bench) -> None:
    chosen = choose_instances(str(bench.suite), str(bench.rows), [], None, None)
    assert [(i.instance_id, i.bundle, i.repo_files) for i in chosen] == [
        (TINY, bench.suite / TINY, None)]
    history = bundled_history(chosen[0])
    assert history is not None and history.dialect == "mini-swe-agent-text"
    assert history.provenance == PROVENANCE and history.content_id() == bench.bundled
    assert history.model_copy(update={"provenance": {}}).content_id() == bench.bundled
    again = load_history_file(bench.suite / TINY / HISTORY_FILE)
    assert again == history
    # a suite of local folders (the default demo) is replaced by the whole dataset
    whole = choose_instances("demo", str(bench.rows), [], None, None)
    assert [(i.instance_id, i.bundle) for i in whole] == [(TINY, None),
                                                          ("replay-demo__tiny-2", None)]


def test_a_mini_swe_agent_history_runs_in_its_protocol_and_the_report_names_it(
        bench: Bench, tmp_path: Path) -> None:
    store, catalogue = tmp_path / "runs" / "replay.db", fixture_prompts(tmp_path)
    with ScriptedServer(*mini_agent(), Script([SUMMARY], model="summ-a")) as server:
        env = models_file(tmp_path, server.base_url)
        done = sweep(bench, env, store, catalogue, "--run", "mini")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 cell(s) finished: 2 run" in done.stdout and server.count == 1 + 2 + 2
        assert all("tools" not in r.body for r in server.requests if r.model == "agent")
        report = run_replay("report", "mini", "--store", str(store), "--cells", "--html",
                            str(tmp_path / "site"), env=env)
    with Store.open(store) as opened:
        found = build(opened, "mini")
    assert found.outcomes[(TINY, "summ-a:claude-code")].label == "preserved"
    for result in found.cells.values():
        assert (result.diagnostics["exit_reason"], result.diagnostics["dialect"]) == (
            "finished", "mini-swe-agent-text")
    assert found.plan.histories == (PlannedHistory(
        instance_id=TINY, id=bench.bundled, rule="steps:1", dialect="mini-swe-agent-text",
        model="google/gemini-3-pro-preview", source="mini-swe-agent v1 (test)", bundled=True,
        provenance=PROVENANCE),)
    source = f"gruckion/mini-swe-agent@d12a71af {PROVENANCE['path']}"
    assert report.returncode == 0 and "histories (what each instance continued from)" in (
        report.stdout)
    assert f"{bench.bundled[:12]} │ steps:1 │ mini-swe-agent-text" in report.stdout
    assert "gruckion/mini-swe-agent@d12a71af" in report.stdout
    folder = store.parent / "reports" / "mini"
    assert (f"| {TINY} | {bench.bundled[:12]} | steps:1 | mini-swe-agent-text | "
            f"google/gemini-3-pro-preview | bundled | {source} |") in (
        folder / "report.md").read_text()
    page = (tmp_path / "site" / "index.html").read_text()
    assert f"<td>{bench.bundled[:12]}</td>" in page and f"<td>{source}</td>" in page
    exported = json.loads((folder / "report.json").read_text())
    assert exported["plan"]["histories"][0]["provenance"] == PROVENANCE


def test_sweeps_choose_stored_histories_by_id_or_rule_and_keep_them(
        bench: Bench, tmp_path: Path) -> None:
    store, catalogue = tmp_path / "runs" / "replay.db", fixture_prompts(tmp_path)
    ids = stored(store, bench.snapshot)
    scripts = [*mini_agent(), Script([TOOL_FIX], model="agent"), Script([SUMMARY], model="summ-a")]
    with ScriptedServer(*scripts) as server:
        env = models_file(tmp_path, server.base_url)
        done = sweep(bench, env, store, catalogue, "--history-rule", "before-edit", "--dry-run")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"histories   {TINY} {ids['edit'][:12]}" in done.stdout
        done = sweep(bench, env, store, catalogue, "--history", ids["first"][:10], "--run", "r")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 cell(s) finished: 2 run" in done.stdout
        tools = [r.body for r in server.requests if r.model == "agent"]
        assert tools and all(body.get("tools") for body in tools)
        done = sweep(bench, env, store, catalogue, "--history", ids["first"][:10], "--run", "r")
        assert done.returncode == 0 and "already in the store: nothing ran" in done.stdout
        refused = sweep(bench, env, store, catalogue, "--run", "r")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        f"error: run 'r' continues {TINY} from history {ids['first'][:12]}, not "
        f"{bench.bundled[:12]}; resume it with --history {ids['first'][:12]}, or choose "
        "another --run name")
    with Store.open(store) as opened:
        plan = load_run(opened, "r")
        assert plan is not None and [(h.id, h.rule, h.bundled) for h in plan.histories] == [
            (ids["first"], "steps:2", False)]
        assert build(opened, "r").outcomes[(TINY, "summ-a:claude-code")].label == "preserved"


@pytest.mark.parametrize("args, message", [
    (["--history", "ffffffffffff"], "error: --history ffffffffffff: no history bundled with the "
                                    "selected instances or stored has this id"),
    (["--history-rule", "steps:2"], f"error: 2 stored histories for instance {TINY} with rule "
                                    "steps:2: "),
    (["--history", "other"], "is for instance replay-demo__tally-1, which is not in the "
                             "selection"),
    (["--history", "first", "--history", "edit"], f"names two histories of instance {TINY}"),
    (["--history-rule", "soon"], "error: bad boundary rule 'soon'"),
])
def test_a_bad_history_choice_is_one_line_exit_2_and_writes_no_run(
        args: list[str], message: str, bench: Bench, tmp_path: Path) -> None:
    store, catalogue = tmp_path / "runs" / "replay.db", fixture_prompts(tmp_path)
    ids = stored(store, bench.snapshot)
    given = [ids[arg][:12] if arg in ids else arg for arg in args]
    with ScriptedServer(Script([SUMMARY])) as server:
        done = replay_here(*backbone(bench, store, catalogue, *given),
                           env=models_file(tmp_path, server.base_url))
        assert server.count == 0
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr
    with Store.open(store) as opened:
        assert runs.names(opened) == []


def test_a_run_keeps_its_histories_and_names_another_choice_as_another_run(
        tmp_path: Path) -> None:
    first = PlannedHistory(instance_id="one", id="a" * 64, rule="steps:2")
    plan = Plan(kind="backbone", agent="agent", agent_id="x", instances=("one",),
                summarizers=("m:claude-code",), histories=(first,))
    other = plan.model_copy(update={"histories": (first.model_copy(update={"id": "b" * 64}),)})
    assert plan.default_name() != other.default_name()
    with Store.open(tmp_path / "replay.db") as store:
        save_run(store, "r", plan.model_copy(update={"histories": ()}))  # stored before them
        assert bind_run(store, "r", plan).histories == (first,)
        save_run(store, "r", plan)
        wider = plan.model_copy(update={"instances": ("two",), "histories": (
            PlannedHistory(instance_id="two", id="c" * 64),)})
        assert [h.instance_id for h in bind_run(store, "r", wider).histories] == ["one", "two"]
        with pytest.raises(Exception, match=f"run 'r' continues one from history {'a' * 12}, "
                                            f"not {'b' * 12}"):
            bind_run(store, "r", other)
