"""`replay cell` as a user runs it, against a scripted model server on 127.0.0.1; `replay run`,
its old name, still runs it and says it is deprecated."""

from __future__ import annotations

from pathlib import Path

from replay.instances.records import load_suite
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from agent_scripts import fixing_turns, lost_turns
from conftest import run_replay

TALLY = next(i for i in load_suite("demo").instances if i.instance_id == "replay-demo__tally-1")


def test_pre_passes_then_is_kept_and_post_fails(tmp_path: Path) -> None:
    store = str(tmp_path / "replay.db")
    with ScriptedServer(Script(fixing_turns(TALLY, tmp_path), model="agent")) as server:
        agent = f"openai:agent@{server.base_url}"
        done = run_replay("cell", "--instance", TALLY.instance_id, "--arm", "pre",
                          "--agent-model", agent, "--store", store)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "tests pass" in done.stdout and "exit finished" in done.stdout
        assert server.count == 4
        again = run_replay("cell", "--instance", TALLY.instance_id, "--arm", "pre",
                           "--agent-model", agent, "--store", store)
        assert again.returncode == 0 and "(kept in the store)" in again.stdout
        assert server.count == 4
    with ScriptedServer(Script(lost_turns(), model="agent")) as server:
        done = run_replay("cell", "--instance", TALLY.instance_id, "--arm", "post",
                          "--summarizer", "anchor_index", "--agent-model",
                          f"openai:agent@{server.base_url}", "--store", store)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "tests fail" in done.stdout and "summary (" in done.stdout
        assert "Index of literal details" in server.requests[0].body["messages"][1]["content"]


def test_the_old_name_runs_the_cell_and_says_it_is_deprecated(tmp_path: Path) -> None:
    store = str(tmp_path / "replay.db")
    with ScriptedServer(Script(fixing_turns(TALLY, tmp_path), model="agent")) as server:
        done = run_replay("run", "--instance", TALLY.instance_id, "--arm", "pre",
                          "--agent-model", f"openai:agent@{server.base_url}", "--store", store)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests pass" in done.stdout and server.count == 4
    assert done.stderr.strip().splitlines() == [
        "warning: `replay run` is now `replay cell` (a run is a sweep kept in the store); the old "
        "name goes in the next release"]
    commands = [line.split()[0] for line in run_replay("--help").stdout.splitlines()
                if line.startswith("  ") and line.strip()]
    assert "cell" in commands and "run" not in commands


def test_a_missing_key_is_one_line_before_any_work(tmp_path: Path) -> None:
    done = run_replay("cell", "--instance", TALLY.instance_id, "--arm", "pre",
                      "--agent-model", "openai:gpt-4.1", "--store", str(tmp_path / "r.db"),
                      env={"OPENAI_API_KEY": ""})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: model 'openai:gpt-4.1' needs an API key: set OPENAI_API_KEY"]


def test_unknown_model_and_missing_summarizer_are_bad_input(tmp_path: Path) -> None:
    store = str(tmp_path / "r.db")
    done = run_replay("cell", "--instance", TALLY.instance_id, "--arm", "pre",
                      "--agent-model", "no-such-model", "--store", store)
    assert done.returncode == 2 and "unknown model 'no-such-model'" in done.stderr
    done = run_replay("cell", "--instance", TALLY.instance_id, "--arm", "post",
                      "--agent-model", "openai:m@http://127.0.0.1:9/v1", "--store", store)
    assert done.returncode == 2 and "--arm post needs --summarizer" in done.stderr


def test_a_server_that_ignores_tools_without_tool_choice(tmp_path: Path) -> None:
    """Issue 16: against a llama.cpp server that drops `tools` unless `tool_choice` is set, the
    agent never made a tool call; the model's `tool_choice` setting makes it act."""
    runs, turns = {}, fixing_turns(TALLY, tmp_path)
    for setting in ("", "?tool_choice=required"):
        with ScriptedServer(Script(turns, model="agent"), tools_need_choice=True) as server:
            runs[setting] = run_replay(
                "cell", "--instance", TALLY.instance_id, "--arm", "pre", "--steps", "4",
                "--agent-model", f"openai:agent@{server.base_url}{setting}",
                "--store", str(tmp_path / "replay.db"))
            assert server.count == 4
    ignored, acted = runs[""], runs["?tool_choice=required"]
    assert ignored.returncode == 1, ignored.stdout + ignored.stderr
    assert "tests fail" in ignored.stdout and "actions 0, exit step_limit" in ignored.stdout
    assert acted.returncode == 0, acted.stdout + acted.stderr
    assert "tests pass" in acted.stdout and "exit finished" in acted.stdout
