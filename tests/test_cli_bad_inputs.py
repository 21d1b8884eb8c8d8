"""Small bad inputs are one line and exit 2 before anything runs or is written."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from conftest import run_replay
from sweep_scripts import TALLY


def one_line_exit_2(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr
    assert done.stderr.startswith(f"error: {message}"), done.stderr


@pytest.mark.parametrize("rule", ["fraction:2", "fraction:1.01", "fraction:0", "steps:0",
                                  "tokens:0"])
def test_an_out_of_range_boundary_is_refused_before_the_agent_runs(rule: str,
                                                                   tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    with ScriptedServer(Script([{"content": "x"}])) as server:
        done = run_replay("collect", "--model", f"openai:agent@{server.base_url}",
                          "--instance", TALLY, "--boundary", rule, "--store", str(store))
        assert server.count == 0
    one_line_exit_2(done, f"bad boundary rule '{rule}'")
    assert not store.exists()


def test_an_out_of_range_history_rule_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    done = run_replay("run", "--instance", TALLY, "--arm", "pre", "--agent-model",
                      "openai:agent@http://127.0.0.1:9/v1", "--history-rule", "fraction:2",
                      "--store", str(store))
    one_line_exit_2(done, "bad boundary rule 'fraction:2'")
    assert not store.exists()


@pytest.mark.parametrize("command", [
    ["backbone", "--agent-model", "openai:a@http://127.0.0.1:9/v1", "--model",
     "openai:s@http://127.0.0.1:9/v1"],
    ["run", "--instance", TALLY, "--arm", "pre", "--agent-model",
     "openai:a@http://127.0.0.1:9/v1"],
    ["collect", "--model", "openai:a@http://127.0.0.1:9/v1", "--boundary", "steps:1"],
    ["validate", "--instance", TALLY],
], ids=lambda command: command[0])
def test_a_repo_mirror_that_is_not_a_folder_is_refused(command: list[str],
                                                       tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    missing = tmp_path / "no-such-folder"
    done = run_replay(*command, "--repo-mirror", str(missing), "--store", str(store))
    one_line_exit_2(done, f"--repo-mirror {missing} does not exist")
    a_file = tmp_path / "mirrors.txt"
    a_file.write_text("not a folder")
    done = run_replay(*command, "--repo-mirror", str(a_file), "--store", str(store))
    one_line_exit_2(done, f"--repo-mirror {a_file} is not a folder")
    done = run_replay(*command, "--store", str(store), env={"REPLAY_REPO_MIRRORS": str(missing)})
    one_line_exit_2(done, f"REPLAY_REPO_MIRRORS {missing} does not exist")
    assert not store.exists()


@pytest.mark.parametrize("command", [["report"], ["confirm"], ["confirm", "--dry-run"]])
def test_report_and_confirm_on_a_missing_store_create_nothing(command: list[str],
                                                              tmp_path: Path) -> None:
    store = tmp_path / "runs" / "replay.db"
    done = run_replay(*command, "--store", str(store))
    one_line_exit_2(done, f"no store at {store}")
    assert not store.exists() and not store.parent.exists()


GONE = "openai:a@http://127.0.0.1:9/v1"


@pytest.mark.parametrize("command", [
    ["run", "--arm", "pre", "--agent-model", GONE],
    ["backbone", "--agent-model", GONE, "--model", GONE],
    ["collect", "--model", GONE, "--boundary", "steps:1"],
    ["validate"],
], ids=lambda command: command[0])
def test_markup_in_an_instance_id_is_shown_as_it_is(command: list[str], tmp_path: Path) -> None:
    """Issue 16: `--instance '[/x]'` ended in a rich MarkupError traceback."""
    store = tmp_path / "replay.db"
    done = run_replay(*command, "--instance", "[/x]", "--store", str(store))
    one_line_exit_2(done, "unknown instance id: [/x]")
    assert not store.exists()


def test_the_model_spec_hint_keeps_its_brackets(tmp_path: Path) -> None:
    done = run_replay("run", "--instance", TALLY, "--arm", "pre", "--agent-model", "gpt-4.2",
                      "--store", str(tmp_path / "replay.db"))
    one_line_exit_2(done, "unknown model 'gpt-4.2'")
    assert "PROVIDER:MODEL[@BASE_URL][#KEY_ENV][?SETTING=VALUE&...]" in done.stderr
    usage = run_replay("run", "--help")
    assert "PROVIDER:MODEL[@URL][#KEY_ENV][?SETTINGS]" in " ".join(usage.stdout.split())
