"""`replay probe` when the server refuses requests for their content: a refused answer (a
history longer than the reader's window) or a refused summary counts zero, is listed, and the
command exits 1 with its exports written; `--instance` narrows a run's probes; intervals and
replies that are not JSON are said in the table."""

from __future__ import annotations

import json
from pathlib import Path

from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.records.plan import Plan
from replay.store import Store
from replay.store.runs import save_run

from conftest import run_replay
from probe_scripts import models_file, needles, panel, reader_scripts, summarizer_scripts
from sweep_scripts import fixture_prompts

S = "summ-drop:claude-code"
TOO_LONG = {"fault": "400", "message": "This model's maximum context length is 8192 tokens"}


def demo_run(store: Path, catalogue: Path) -> list:
    """A run `r` of the demo suite with summarizer S, nothing swept yet; its probe items."""
    items = panel("demo")
    plan = Plan(kind="prompt", agent="agent", agent_id="openai:agent@http://127.0.0.1:1/v1",
                instances=tuple(instance.instance_id for instance, _, _ in items),
                summarizers=(S,), prompt_sources=str(catalogue))
    with Store.open(store) as opened:
        save_run(opened, "r", plan)
    return items


def test_refused_requests_count_zero_are_listed_and_exit_1(tmp_path: Path) -> None:
    store = tmp_path / "runs" / "replay.db"
    items = demo_run(store, fixture_prompts(tmp_path))
    (first, _, first_probes), (second, _, _) = items[0], items[1]
    probe = first_probes.probes[0]
    scripts = [  # Full of the first history is too long for the reader; the second's summary
        Script([TOO_LONG], model="reader", contains=probe.question, seen=needles(probe)),
        Script([TOO_LONG], model="summ-drop", seen=[second.problem_statement[:80]]),
        Script([{"content": "I think the request failed."}], model="reader",
               seen=[items[2][0].problem_statement[:80]]),  # not JSON
        *reader_scripts(items), *summarizer_scripts()]
    out = tmp_path / "out"
    with ScriptedServer(*scripts) as server:
        env = models_file(tmp_path, server.base_url)
        done = run_replay("probe", "r", "--model", "reader", "--generations", "1", "--answers",
                          "1", "--store", str(store), "--out", str(out), env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "planned answer(s) failed and count zero" in done.stdout
    assert f"{first.instance_id} full generation 0 {probe.id} #0: answer: refused:" \
        in done.stdout
    assert f"{second.instance_id} {S} generation 0" in done.stdout and "summary: refused" \
        in done.stdout
    assert "were not the JSON asked" in done.stdout
    assert "field acc, all correct: means over histories (low-high: their 95% interval, " \
        "percentile bootstrap over histories" in done.stdout
    document = json.loads((out / "probes.json").read_text())
    failures = document["failures"]
    assert {f["instance"] for f in failures} == {first.instance_id, second.instance_id}
    assert all(f["accuracy"] == 0.0 for f in failures)
    rows = {row["method"]: row for row in document["rows"]}
    assert rows["full"]["failed"] == 1 and rows[S]["failed"] == len(items[1][2].probes)
    assert rows["full"]["malformed"] == len(items[2][2].probes)
    assert rows["full"]["accuracy_interval"] is not None  # three histories
    assert (out / "probes.csv").read_text().splitlines()[0].split(",")[5] == "not_json"


def test_instance_narrows_a_runs_probes(tmp_path: Path) -> None:
    store = tmp_path / "runs" / "replay.db"
    items = demo_run(store, fixture_prompts(tmp_path))
    chosen = items[1][0].instance_id
    out = tmp_path / "out"
    with ScriptedServer(*reader_scripts(items), *summarizer_scripts()) as server:
        env = models_file(tmp_path, server.base_url)
        done = run_replay("probe", "r", "--instance", chosen, "--model", "reader",
                          "--generations", "1", "--answers", "1", "--store", str(store),
                          "--out", str(out), env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        asked = {body for request in server.requests if request.model == "reader"
                 for body in [json.dumps(request.body["messages"])]}
        wrong = run_replay("probe", "r", "--instance", "nope-1", "--model", "reader",
                           "--store", str(store), env=env)
    assert wrong.returncode == 2 and "instance nope-1 is not in run r" in wrong.stderr
    document = json.loads((out / "probes.json").read_text())
    assert {row["n"] for row in document["rows"]} == {1}
    assert {h["instance_id"] for h in document["histories"]} == {chosen}
    marker = json.dumps(items[1][0].problem_statement[:60])[1:-1]
    assert asked and all(marker in body for body in asked)
