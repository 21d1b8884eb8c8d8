"""Sweeps against servers that behave as real ones do: a context too small for a summary or a
history (the 400 bodies of llama.cpp and vLLM), and a deterministic server under `confirm`.
Scripted models on 127.0.0.1; see sweep_scripts.py for the agent."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.report.tables import build
from replay.store import Store
from replay.store.runs import load_cells

from conftest import run_replay
from sweep_scripts import (
    DEMO,
    STOCKROOM,
    TALLY,
    agent_scripts,
    fixture_prompts,
    models_env,
    summary,
)

GOOD, LOST = summary("summ-d", True), summary("summ-d", False)
LONG_SUMMARY = {"content": "<summary>PLAN-OK: " + "every detail kept. " * 3000 + "</summary>"}
AGENT_WINDOW = 10_000  # tokens: the demo histories fit (at most about 7,100), a 60 kB summary not
SMALL_WINDOW = 1_000  # tokens: no demo history fits


def sweep(tmp_path: Path, env: dict[str, str], *args: str):
    return run_replay(*args, "--store", str(tmp_path / "replay.db"), env=env)


def backbone(tmp_path: Path, env: dict[str, str], *args: str):
    return sweep(tmp_path, env, "backbone", "--agent-model", "agent", "--instance", STOCKROOM,
                 "--instance", TALLY, "--run", "r", "--prompt-sources",
                 str(fixture_prompts(tmp_path)), *args)


def cells(tmp_path: Path) -> dict[str, tuple[str, bool | None, str | None]]:
    with Store.open(tmp_path / "replay.db") as store:
        return {str(cell): (result.status, result.passed, result.refused)
                for cell, result in load_cells(store, "r").items()}


def test_refused_requests_are_results_kept_and_never_sent_again(tmp_path: Path) -> None:
    summarizers = [Script([summary("summ-a", True)], model="summ-a"),
                   Script([LONG_SUMMARY], model="summ-long")]
    with ScriptedServer(*agent_scripts(tmp_path), *summarizers, context_window=AGENT_WINDOW,
                        dialect="llama.cpp") as server, \
            ScriptedServer(Script([GOOD]), context_window=SMALL_WINDOW, dialect="vllm") as small:
        urls = {"agent": (server.base_url, ""), "summ-a": (server.base_url, ""),
                "summ-long": (server.base_url, ""), "summ-tiny": (small.base_url, "")}
        env = models_env(tmp_path, urls)
        models = ["--model", "summ-a", "--model", "summ-long", "--model", "summ-tiny"]
        done = backbone(tmp_path, env, *models)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "4 ended in a refused request" in done.stdout and "0 error(s)" in done.stdout
        found = cells(tmp_path)
        for instance in (STOCKROOM, TALLY):
            assert found[f"{instance} pre seed 0"][:2] == ("done", True)
            assert found[f"{instance} post summ-a:claude-code seed 0"] == ("done", True, None)
            status, passed, why = found[f"{instance} post summ-long:claude-code seed 0"]
            assert (status, passed) == ("done", False)
            assert why.startswith("agent request refused: model 'agent'")
            assert "context length exceeded, HTTP 400" in why
            assert f"prompt tokens, context {AGENT_WINDOW})" in why
            status, passed, why = found[f"{instance} post summ-tiny:claude-code seed 0"]
            assert (status, passed) == ("done", False)
            assert why.startswith("summarizer request refused: model 'summ-tiny'")
            assert "This model's maximum context length is 1000 tokens" in why
        sent = (server.count, small.count)

        again = backbone(tmp_path, env, *models)
        assert again.returncode == 0, again.stdout + again.stderr
        assert (server.count, small.count) == sent  # a re-run makes no request at all
        assert "already in the store: nothing ran" in again.stdout

        confirmed = sweep(tmp_path, env, "confirm", "r")
        assert confirmed.returncode == 0, confirmed.stdout + confirmed.stderr
        assert "confirming 4 damaged pair(s)" in confirmed.stdout
        assert "temperature 0" not in confirmed.stdout
        # only summ-long's summaries at seeds 1 and 2 are new requests; the agent's request with
        # that same summary, and summ-tiny's, differ only by their seed: refused from the store
        assert (server.count - sent[0], small.count - sent[1]) == (2 * 2, 0)

        reported = sweep(tmp_path, env, "report", "r", "--cells")
    with Store.open(tmp_path / "replay.db") as store:
        report = build(store, "r")
    codes = {pair: outcome for pair, outcome in report.outcomes.items()}
    assert codes[(TALLY, "summ-tiny:claude-code")].confirmation == "stable"
    # neither POST ran (the summary was refused, or did not fit the agent): `#`, not `*`
    assert codes[(TALLY, "summ-tiny:claude-code")].not_run.startswith(
        "POST summarizer request refused: model 'summ-tiny'")
    assert codes[(TALLY, "summ-long:claude-code")].refused is None
    assert "D!#" in reported.stdout and "D!*" not in reported.stdout
    assert "# a cell that could not run: its first request was refused" in reported.stdout
    assert {rate.summarizer: rate.refused for rate in report.rates} == {
        "summ-a:claude-code": 0, "summ-long:claude-code": 2, "summ-tiny:claude-code": 2}
    rows = list(csv.DictReader((tmp_path / "reports" / "r" / "cells.csv").open()))
    assert {row["refused"].split(" request")[0] for row in rows if row["refused"]} == {
        "agent", "summarizer"}


def test_a_refusal_is_sent_again_once_the_models_settings_change(tmp_path: Path) -> None:
    with ScriptedServer(*agent_scripts(tmp_path)) as server, \
            ScriptedServer(Script([GOOD]), context_window=SMALL_WINDOW,
                           dialect="llama.cpp") as small:
        urls = {"agent": (server.base_url, ""), "summ-tiny": (small.base_url, "")}
        done = backbone(tmp_path, models_env(tmp_path, urls), "--model", "summ-tiny")
        assert done.returncode == 0 and small.count == 2, done.stdout + done.stderr
        urls["summ-tiny"] = (small.base_url, "max_tokens = 64")
        plan = backbone(tmp_path, models_env(tmp_path, urls), "--model", "summ-tiny", "--dry-run")
        assert "cells 4: 2 done, 0 kept in the store, 2 to run" in plan.stdout, plan.stdout
        again = backbone(tmp_path, models_env(tmp_path, urls), "--model", "summ-tiny")
        assert again.returncode == 0, again.stdout + again.stderr
        assert small.count == 4 and "2 cell(s) finished: 2 run" in again.stdout


def _summary_bodies(server: ScriptedServer, instance: str) -> list[dict]:
    marker = json.dumps(DEMO[instance].problem_statement[:60])[1:-1]
    return [request.body for request in server.requests
            if request.model == "summ-d" and marker in json.dumps(request.body)]


def test_confirm_on_a_deterministic_server_sends_fresh_samples(tmp_path: Path) -> None:
    """Issue 16: at temperature 0 with no seed the three summaries were one request; now each
    sample goes out with its seed, and at temperature 0 confirm says its samples cannot
    differ."""
    runs = {}
    for temperature in ("0", "1"):
        folder = tmp_path / f"t{temperature}"
        folder.mkdir()
        deterministic = Script([LOST, GOOD, GOOD], model="summ-d", by_seed=True)
        with ScriptedServer(*agent_scripts(folder), deterministic) as server:
            env = models_env(folder, {"agent": (server.base_url, ""),
                                      "summ-d": (server.base_url, "")})
            done = sweep(folder, env, "backbone", "--agent-model", "agent", "--model", "summ-d",
                         "--instance", STOCKROOM, "--run", "r", "--temperature", temperature,
                         "--prompt-sources", str(fixture_prompts(folder)))
            assert done.returncode == 0, done.stdout + done.stderr
            confirmed = sweep(folder, env, "confirm", "r")
            assert confirmed.returncode == 0, confirmed.stdout + confirmed.stderr
            bodies = _summary_bodies(server, STOCKROOM)
        assert [body["seed"] for body in bodies] == [0, 1, 2]
        assert {body["temperature"] for body in bodies} == {float(temperature)}
        assert len({json.dumps(body, sort_keys=True) for body in bodies}) == 3
        with Store.open(folder / "replay.db") as store:
            runs[temperature] = build(store, "r").outcomes[(STOCKROOM, "summ-d:claude-code")]
        runs[temperature + " output"] = confirmed.stdout
    assert runs["0"].confirmation == "stable" and runs["1"].confirmation == "seed-variable"
    assert "agent, summ-d sample(s) at temperature 0" in runs["0 output"]
    assert "samples cannot differ" in runs["0 output"]
    assert "temperature 0" not in runs["1 output"]
