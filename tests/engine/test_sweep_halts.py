"""Sweeps on the demo suite that meet a model that never answers, an endpoint that cannot be
reached and a refused key, as a user runs them (scripted models on 127.0.0.1)."""

from __future__ import annotations

import time
from pathlib import Path

from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.store import Store
from replay.store.runs import load_cells

from conftest import closed_port_url, run_replay
from sweep_scripts import DEMO, TALLY, fix_turn, fixture_prompts, summarizer_scripts

HANG = {"fault": "hang"}


def aliases(home: Path, urls: dict[str, str], key_env: str = "") -> dict[str, str]:
    """A user models file naming each alias's base URL (`agent` reads its key from `key_env`);
    returns the environment that uses it."""
    tables = []
    for alias, url in urls.items():
        key = f'key_env = "{key_env}"\n' if key_env and alias == "agent" else ""
        tables.append(f'["{alias}"]\nprovider = "openai"\nmodel = "{alias}"\n'
                      f'base_url = "{url}"\n{key}')
    path = home / ".config" / "replay" / "models.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(tables))
    return {"HOME": str(home)}


def backbone(tmp_path: Path, env: dict[str, str], *args: str):
    """`replay backbone` on the tally instance with agent `agent`, into tmp_path/replay.db."""
    return run_replay("backbone", "--agent-model", "agent", "--instance", TALLY, "--run", "r",
                      "--store", str(tmp_path / "replay.db"), "--prompt-sources",
                      str(fixture_prompts(tmp_path)), *args, env=env)


def error_line(stderr: str) -> str:
    """The command's one line of error: stderr holds nothing else but logged warnings (the
    retries of `replay run`, a slot another process left)."""
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("WARNING ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


def cells(tmp_path: Path) -> dict[str, tuple[str, str | None]]:
    with Store.open(tmp_path / "replay.db") as store:
        return {str(cell): (result.status, result.fault and result.fault.text())
                for cell, result in load_cells(store, "r").items()}


def test_a_model_that_never_answers_makes_error_cells_at_the_deadline_then_runs_again(
        tmp_path: Path) -> None:
    fix = fix_turn([DEMO[TALLY]], tmp_path)
    agent = Script([HANG, HANG, {"fault": "503", "retry_after": 0}], model="agent", default=fix)
    with ScriptedServer(agent, *summarizer_scripts()) as server:
        env = aliases(tmp_path, {"agent": server.base_url, "summ-a": server.base_url})
        started = time.monotonic()
        done = backbone(tmp_path, env, "--model", "summ-a", "--call-deadline", "1")
        seconds = time.monotonic() - started
        assert done.returncode == 1, done.stdout + done.stderr
        found = cells(tmp_path)
        assert [status for status, _ in found.values()] == ["error", "error"]
        for _, error in found.values():
            assert f"model 'agent' at {server.base_url}: no answer within the 1 s call " \
                   "deadline" in error
        assert "2 error(s)" in done.stdout and seconds < 60

        again = backbone(tmp_path, env, "--model", "summ-a")
        assert again.returncode == 0, again.stdout + again.stderr
        assert f"{TALLY} pre seed 0: model 'agent' at {server.base_url}: attempt 1 of 6 " \
               "failed (HTTP 503), retrying in 0.0s" in again.stdout
    assert [status for status, _ in cells(tmp_path).values()] == ["done", "done"]


def test_an_unreachable_endpoint_stops_the_sweep_and_keeps_what_finished(tmp_path: Path) -> None:
    gone = closed_port_url()
    fix = fix_turn([DEMO[TALLY]], tmp_path)
    with ScriptedServer(Script([fix], model="agent"), *summarizer_scripts()) as server:
        env = aliases(tmp_path, {"agent": server.base_url, "summ-a": server.base_url,
                                 "summ-b": gone, "summ-c": gone})
        started = time.monotonic()
        done = backbone(tmp_path, env, "--model", "summ-a", "--model", "summ-b", "--model",
                        "summ-c")
        seconds = time.monotonic() - started
    assert done.returncode == 2, done.stdout + done.stderr
    assert error_line(done.stderr).startswith(
        f"error: model endpoint {gone} is unreachable: 3 connection attempts in a row failed")
    # three connection attempts in all: two retried, the third trips the breaker
    assert done.stdout.count("failed (connection failed), retrying") == 2
    assert cells(tmp_path) == {f"{TALLY} pre seed 0": ("done", None),
                               f"{TALLY} post summ-a:claude-code seed 0": ("done", None)}
    assert seconds < 60


def test_a_sweep_against_a_closed_port_stops_at_once_with_nothing_stored(tmp_path: Path) -> None:
    gone = closed_port_url()
    env = aliases(tmp_path, {"agent": gone, "summ-a": gone, "summ-b": gone})
    done = backbone(tmp_path, env, "--model", "summ-a", "--model", "summ-b", "--workers", "2")
    assert done.returncode == 2, done.stdout + done.stderr
    assert gone in error_line(done.stderr)
    assert done.stdout.count("(connection failed)") <= 3
    assert cells(tmp_path) == {}


def test_a_refused_key_stops_the_sweep_naming_its_variable(tmp_path: Path) -> None:
    with ScriptedServer(*summarizer_scripts(), api_key="the-right-key") as server:
        env = aliases(tmp_path, {"agent": server.base_url, "summ-a": server.base_url},
                      key_env="REPLAY_TEST_WRONG_KEY")
        env["REPLAY_TEST_WRONG_KEY"] = "a-wrong-key"
        done = backbone(tmp_path, env, "--model", "summ-a")
        assert server.count == 1
    assert done.returncode == 2, done.stdout + done.stderr
    assert "refused the API key (HTTP 401): check REPLAY_TEST_WRONG_KEY" in error_line(
        done.stderr)
    assert cells(tmp_path) == {}


def test_a_refused_key_in_replay_run_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with ScriptedServer(Script([{"content": "x"}]), api_key="the-right-key") as server:
        done = run_replay("cell", "--instance", TALLY, "--arm", "pre", "--agent-model",
                          f"openai:agent@{server.base_url}#REPLAY_TEST_WRONG_KEY", "--store",
                          str(tmp_path / "replay.db"),
                          env={"REPLAY_TEST_WRONG_KEY": "a-wrong-key"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "check REPLAY_TEST_WRONG_KEY" in error_line(done.stderr)


def test_an_unreachable_agent_in_replay_run_is_one_line_and_exit_2(tmp_path: Path) -> None:
    gone = closed_port_url()
    done = run_replay("cell", "--instance", TALLY, "--arm", "pre", "--agent-model",
                      f"openai:agent@{gone}", "--store", str(tmp_path / "replay.db"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert error_line(done.stderr).startswith(f"error: model endpoint {gone} is unreachable")
    assert done.stderr.count("(connection failed), retrying") == 2
