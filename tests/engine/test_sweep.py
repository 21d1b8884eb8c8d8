"""Backbone, prompt and confirm sweeps on the demo suite, with a scripted server standing in
for three summarizer models and the agent (see sweep_scripts.py for what each one does): the
session's sweep (demo_sweep.py) through `replay.api`, asserted on the records it returns; a
sweep killed in the middle; and what `replay backbone` and `prompt` refuse, as a user runs them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from replay import api
from replay.models.scripted import ReceivedRequest, ScriptedServer
from replay.records.plan import Plan
from replay.report.tables import build
from replay.store import Store, runs, validations
from replay.store.runs import load_cells, save_run

from conftest import REPLAY, replay_here, run_replay
from demo_sweep import DemoSweep, printed_report
from sweep_scripts import (
    DEMO,
    INICONF,
    STOCKROOM,
    TALLY,
    agent_scripts,
    fixture_prompts,
    models_file,
    summarizer_scripts,
)

A, B, C = (f"summ-{x}:claude-code" for x in "abc")

# the five prompts the fixture catalogue pins
# (hermes needs its code: tests/unit/compaction/test_hermes.py)
FIVE = "claude-code,codex,gemini-cli,opencode,kimi-code"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    """A store path and the fixture prompt catalogue."""
    return tmp_path / "runs" / "replay.db", fixture_prompts(tmp_path)


def labels(store_path: Path, run: str) -> dict[tuple[str, str], str]:
    """(instance, summarizer) -> label, with the confirmation marked on damaged pairs."""
    with Store.open(store_path) as store:
        report = build(store, run)
    return {pair: outcome.label + (f" {outcome.confirmation}" if outcome.confirmation else "")
            for pair, outcome in report.outcomes.items()}


def replay(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = run_replay(*args, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def fresh_samples(requests: tuple[ReceivedRequest, ...], model: str) -> bool:
    """The stockroom summaries by `model` went out as distinct requests at seeds 0, 1 and 2,
    sampled at the default temperature."""
    marker = json.dumps(DEMO[STOCKROOM].problem_statement[:60])[1:-1]
    bodies = [r.body for r in requests if r.model == model and marker in json.dumps(r.body)]
    assert sorted(body["seed"] for body in bodies) == [0, 1, 2]
    assert len({json.dumps(body, sort_keys=True) for body in bodies}) == 3
    return {body["temperature"] for body in bodies} == {1.0}


def test_backbone_and_prompt_sweeps_give_the_labels_the_scripts_imply(
        demo_sweep: DemoSweep) -> None:
    first, store = demo_sweep.backbone.result, demo_sweep.store
    assert (len(first.results), first.ran, first.kept, first.errors) == (12, 12, 0, [])
    # 3 instances x 3 summaries, 3 PRE + 9 POST continuations of one step each
    assert demo_sweep.calls["backbone"] == 9 + 12
    assert labels(store, "backbones") == {
        (STOCKROOM, A): "preserved", (STOCKROOM, B): "damaged stable",
        (STOCKROOM, C): "damaged seed-variable",
        (TALLY, A): "preserved", (TALLY, B): "preserved", (TALLY, C): "preserved",
        (INICONF, A): "rescued", (INICONF, B): "unsolved", (INICONF, C): "unsolved"}
    assert [cell.status for cell in demo_sweep.backbone.result.results] == ["done"] * 12
    # the same plan again: every cell from the store, no call
    assert demo_sweep.again.result.results == [] and demo_sweep.calls["again"] == 0
    assert demo_sweep.again.code == 0

    compared = demo_sweep.prompts.result
    # PRE and the claude-code column come from the backbone run: 3 + 3 cells kept; the other
    # four prompts make 3 summaries each (gemini-cli 6) and 12 POST continuations
    assert (len(compared.results), compared.ran, compared.kept) == (18, 12, 6)
    assert demo_sweep.calls["prompts"] == (3 + 3 + 6 + 3) + 12
    prompts = labels(store, "prompts")
    for name in ("claude-code", "gemini-cli", "opencode", "kimi-code"):
        assert [prompts[(i, f"summ-a:{name}")] for i in (STOCKROOM, TALLY, INICONF)] == [
            "preserved", "preserved", "rescued"]
    assert [prompts[(i, "summ-a:codex")] for i in (STOCKROOM, TALLY, INICONF)] == [
        "damaged", "preserved", "unsolved"]
    printed = printed_report(store, "prompts")
    assert "POST pass" in printed and "1/2 (50.0%, 9.5-90.5%)" in printed


def test_confirm_reruns_the_damaged_pairs_at_two_fresh_seeds(demo_sweep: DemoSweep) -> None:
    confirmed = demo_sweep.confirmation
    assert confirmed.run == "backbones" and confirmed.code == 0
    assert set(confirmed.plan.confirm) == {(STOCKROOM, B), (STOCKROOM, C)}
    assert len(confirmed.rounds) == 1
    # 2 pairs x 2 seeds x 2 calls (a fresh summary and a fresh continuation)
    assert demo_sweep.calls["confirm"] == 2 * 2 * 2
    assert fresh_samples(demo_sweep.requests, "summ-b")
    printed = printed_report(demo_sweep.store, "backbones")
    assert "D!" in printed and "D~" in printed


def test_the_exports_of_a_confirmed_run(demo_sweep: DemoSweep, tmp_path: Path) -> None:
    exported = api.export(demo_sweep.store, "backbones", tmp_path / "reports")
    folder = tmp_path / "reports"
    assert folder / "heatmap.png" in exported.files
    found = json.loads((folder / "report.json").read_text())
    codes = {(o["instance_id"], o["summarizer"]): o["code"] for o in found["outcomes"]}
    assert codes[(STOCKROOM, B)] == "D!" and codes[(STOCKROOM, C)] == "D~"
    assert codes[(INICONF, A)] == "R" and codes[(TALLY, C)] == "P"
    rates = {rate["summarizer"]: rate for rate in found["rates"]}
    assert rates[B]["damaged"] == 1 and rates[B]["pre_pass"] == 2 and rates[B]["stable"] == 1
    assert rates[C]["seed_variable"] == 1 and rates[A]["rate"] == 0
    pre = next(c for c in found["cells"] if c["arm"] == "pre" and c["instance"] == TALLY)
    assert (pre["steps"], pre["actions"], pre["exit"], pre["result"]) == (1, 2, "finished", "pass")
    assert (folder / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| instance |" in (folder / "report.md").read_text()
    assert len((folder / "cells.csv").read_text().splitlines()) == 1 + 12 + 4
    assert len((folder / "outcomes.csv").read_text().splitlines()) == 1 + 9


def _table(store_path: Path, run: str) -> dict:
    with Store.open(store_path) as store:
        cells = {str(cell): (r.status, r.passed, r.continuation)
                 for cell, r in load_cells(store, run).items()}
    return {"labels": labels(store_path, run), "cells": cells}


def test_a_sweep_killed_in_the_middle_finishes_the_same_table(setup: tuple[Path, Path],
                                                              tmp_path: Path) -> None:
    _, catalogue = setup
    sweep = ["backbone", "--model", "summ-a", "--model", "summ-b", "--agent-model", "agent",
             "--instance", STOCKROOM, "--instance", TALLY, "--run", "killed",
             "--prompt-sources", str(catalogue)]
    whole, cut = (tmp_path / name / "replay.db" for name in ("whole", "cut"))
    # all four LOST POSTs sleep 2 s: the uninterrupted run's two, the killed run's and its resume's
    scripts = agent_scripts(tmp_path, lost_sleep=2, sleeping=4)
    with ScriptedServer(*summarizer_scripts(), *scripts) as server:
        env = models_file(tmp_path, server.base_url)
        replay(env, *sweep, "--store", str(whole), "--workers", "2")
        uninterrupted = server.count
        process = subprocess.Popen([*REPLAY, *sweep, "--store", str(cut)],
                                   env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        # cells run in plan order on one worker; the first LOST POST (stockroom, summ-b) sleeps
        # 2 s in its command after its only request: kill it there, with 3 cells written
        deadline = time.monotonic() + 120
        while not any(r.model == "agent" and "LOST" in json.dumps(r.body)
                      for r in server.requests[uninterrupted:]):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        time.sleep(1)  # its reply is cached by now; the command sleeps on
        process.send_signal(signal.SIGKILL)
        process.wait()
        with Store.open(cut) as store:
            assert len(load_cells(store, "killed")) == 3
        replay(env, *sweep, "--store", str(cut))
        assert server.count == 2 * uninterrupted
    assert _table(cut, "killed") == _table(whole, "killed")


@pytest.mark.parametrize("args, message", [
    (["--model", "nope"], "error: unknown model 'nope'"),
    (["--model", "summ-a", "--prompt", "nope"], "error: unknown summarizer 'summ-a:nope'"),
    (["--model", "keyed"], "error: model 'keyed' needs an API key: set REPLAY_TEST_UNSET_KEY"),
    (["--model", "summ-a", "--filter", "no-such-instance"],
     "error: the selection is empty: no instance matches"),
    (["--model", "summ-a", "--run", "taken"], "error: run 'taken' belongs to a different plan"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str,
                                          setup: tuple[Path, Path], tmp_path: Path) -> None:
    store, catalogue = setup
    with ScriptedServer(*summarizer_scripts()) as server:
        env = models_file(tmp_path, server.base_url)
        with Store.open(store) as opened:
            save_run(opened, "taken", Plan(kind="backbone", agent="agent", agent_id="other",
                                           instances=(TALLY,), summarizers=(A,)))
        done = replay_here("backbone", "--agent-model", "agent", *args, "--store", str(store),
                          "--prompt-sources", str(catalogue), env=env)
        assert server.count == 0
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith(message)
    with Store.open(store) as opened:
        assert validations.find(opened, TALLY, "local") is None


def test_a_missing_option_is_a_usage_error_not_a_traceback(tmp_path: Path) -> None:
    """`backbone` needs no option (its models default to the embedded one); `prompt` needs its
    summarizer."""
    done = replay_here("prompt", "--agent-model", "agent", "--store", str(tmp_path / "r.db"))
    assert done.returncode == 2
    assert "Missing option '--summarizer'" in done.stderr and "Traceback" not in done.stderr


def test_unknown_prompt_in_a_prompt_sweep(setup: tuple[Path, Path], tmp_path: Path) -> None:
    store, catalogue = setup
    env = models_file(tmp_path, "http://127.0.0.1:9/v1")
    done = replay_here("prompt", "--agent-model", "agent", "--summarizer", "summ-a", "--prompts",
                      "codex,nope", "--store", str(store), "--prompt-sources", str(catalogue),
                      env=env)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "unknown summarizer 'summ-a:nope'" in done.stderr


def test_dry_run_shows_the_plan_and_calls_nothing(setup: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    store, catalogue = setup
    with ScriptedServer(*summarizer_scripts()) as server:
        env = models_file(tmp_path, server.base_url)
        done = replay(env, "prompt", "--agent-model", "agent", "--summarizer", "summ-a",
                      "--prompts", FIVE, "--baseline", "anchor_index", "--store", str(store),
                      "--prompt-sources", str(catalogue), "--dry-run")
        assert server.count == 0
    # 3 PRE + 3 x (5 prompts + 1 baseline) POST; gemini-cli makes two calls per summary
    assert "cells 21: 0 done, 0 kept in the store, 21 to run" in done.stdout
    assert "model calls at most 186 (18 summaries, 168 agent steps)" in done.stdout
    assert "cost at most $" in done.stdout and "no price" not in done.stdout
    with Store.open(store) as opened:
        assert runs.names(opened) == []
