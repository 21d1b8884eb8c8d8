"""`replay probe` as a user runs it, on the probe panel and on a sweep of the demo suite, with
scripted models (see probe_scripts.py): Full answers every fact, a summary that dropped the
needles does not, fusing it with the judged evidence brings them back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay import api
from replay.models.scripted import ScriptedServer
from replay.store import Store
from replay.store.calls import seconds_total

from conftest import run_replay
from demo_sweep import environment, sweep_options
from probe_scripts import (
    judge_scripts,
    models_file,
    panel,
    reader_scripts,
    summarizer_scripts,
)
from sweep_scripts import agent_scripts, fixture_prompts

S = "summ-drop:claude-code"
FUSED = f"{S}+top:3@judge"


def table(folder: Path) -> dict[tuple[str, str], dict]:
    """(method, cohort) -> row of the exported table."""
    document = json.loads((folder / "probes.json").read_text())
    return {(row["method"], row["cohort"]): row for row in document["rows"]}


def test_the_panel_full_scores_one_and_a_needle_dropping_summary_less(tmp_path: Path) -> None:
    items = panel("probe-panel")
    store = tmp_path / "runs" / "replay.db"
    catalogue = fixture_prompts(tmp_path)
    arguments = ["probe", "--suite", "probe-panel", "--method", S, "--method", FUSED,
                 "--model", "reader", "--generations", "2", "--answers", "2", "--store",
                 str(store), "--prompt-sources", str(catalogue), "--out", str(tmp_path / "out")]
    scripts = [*reader_scripts(items), *judge_scripts(items), *summarizer_scripts()]
    with ScriptedServer(*scripts) as server:
        env = models_file(tmp_path, server.base_url)
        done = run_replay(*arguments, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        calls = server.count
        # 10 histories: 2 summaries, 1 judge call, 2 answers in each of 3 distinct contexts
        # (Full, S, S+top:3: both generations of S wrote the same text, so ask the same)
        assert calls == 10 * (2 + 1 + 3 * 2)
        again = run_replay(*arguments, env=env)
        assert again.returncode == 0 and server.count == calls  # all from the call cache
        bodies = [request.body for request in server.requests]
    rows = table(tmp_path / "out")
    for cohort in ("primary", "control"):
        assert rows[("full", cohort)]["accuracy"] == 1.0
        assert rows[("full", cohort)]["all_correct"] == 1.0
        assert rows[(S, cohort)]["accuracy"] < 1.0
        assert rows[(S, cohort)]["reduction"] > 0
    assert rows[(S, "primary")]["accuracy"] == 0.0 and rows[(S, "primary")]["n"] == 7
    assert rows[(FUSED, "primary")]["accuracy"] == 1.0
    assert rows[(FUSED, "control")]["not_shorter"]  # short fixtures: fusion keeps everything
    assert "full" in done.stdout and "primary" in done.stdout and "not shorter" in done.stdout
    assert "of 3 units kept on average" in done.stdout
    questions = [probe.question for _, _, found in items for probe in found.probes]
    for body in bodies:
        if body["model"] != "reader":  # summarizers and the judge never see a probe
            text = json.dumps(body["messages"])
            assert not any(question in text for question in questions)
    with Store.open(store) as opened:
        calls = seconds_total(opened)[1]
    assert calls == 10 * (2 + 1 + 3 * 2)


def test_probing_a_sweep_run_uses_its_summaries(tmp_path: Path) -> None:
    items = panel("demo")
    store = tmp_path / "runs" / "replay.db"
    catalogue = fixture_prompts(tmp_path)
    scripts = [*reader_scripts(items), *judge_scripts(items), *summarizer_scripts(),
               *agent_scripts(tmp_path)]
    with ScriptedServer(*scripts) as server:
        env = models_file(tmp_path, server.base_url)
        with environment(env):  # the run to probe, made through replay.api
            plan = api.plan("prompt", [*api.summarizers(["summ-drop"], "claude-code"),
                                       *api.summarizers(["summ-drop"], "claude-code+top:2@judge")],
                            "agent", prompt_sources=catalogue)
            sweep = api.sweep(plan, sweep_options(store), "fused")
        assert sweep.code == 0, sweep.result
        summaries = server.count_for("summ-drop") + server.count_for("judge")
        assert summaries == 3 + 3  # one summary and one judge call per history
        done = run_replay("probe", "fused", "--model", "reader", "--generations", "1",
                          "--answers", "1", "--store", str(store), env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert server.count_for("summ-drop") + server.count_for("judge") == summaries
    rows = table(store.parent / "reports" / "fused" / "probes")
    assert rows[("full", "demo")]["accuracy"] == 1.0
    assert rows[("summ-drop:claude-code", "demo")]["accuracy"] == 0.0
    assert rows[("summ-drop:claude-code+top:2@judge", "demo")]["n"] == 3


@pytest.mark.parametrize("arguments, message", [
    (["nope"], "no run 'nope'"),
    (["fused", "--method", "summ-x:codex"], "unknown method summ-x:codex in run fused"),
    (["fused", "--probes", "{bad}"], "not a probe file"),
    (["fused", "--suite", "demo"], "not both"),
    (["--method", "summ-drop:nope"], "unknown summarizer"),
])
def test_bad_input_is_one_line_and_exit_2_with_nothing_written(
        tmp_path: Path, arguments: list[str], message: str) -> None:
    from replay.records.plan import Plan
    from replay.store.runs import save_run

    store = tmp_path / "runs" / "replay.db"
    with Store.open(store) as opened:
        save_run(opened, "fused", Plan(kind="prompt", agent="agent", agent_id="a",
                                       instances=("replay-demo__tally-1",),
                                       summarizers=(S,)))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"instance_id": "x", "history": "0" * 64, "cohort": "c",
                               "probes": []}))
    arguments = [part.replace("{bad}", str(bad)) for part in arguments]
    done = run_replay("probe", *arguments, "--model", "openai:m@http://127.0.0.1:9/v1",
                      "--store", str(store))
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs" / "reports").exists()


def test_a_summary_that_fails_counts_zero_and_is_listed(tmp_path: Path) -> None:
    from replay.models.scripts import Script

    items = panel("demo")
    catalogue = fixture_prompts(tmp_path)
    scripts = [*reader_scripts(items), Script([{"fault": "500"}], model="summ-drop")]
    with ScriptedServer(*scripts) as server:
        done = run_replay("probe", "--method", S, "--instance", "replay-demo__tally-1",
                          "--model", "reader", "--generations", "1", "--answers", "2",
                          "--call-deadline", "0.3", "--prompt-sources", str(catalogue),
                          "--store", str(tmp_path / "r.db"), "--out", str(tmp_path / "out"),
                          env=models_file(tmp_path, server.base_url))
    assert done.returncode == 1, done.stdout + done.stderr
    rows = table(tmp_path / "out")
    assert rows[("full", "demo")]["accuracy"] == 1.0
    failed = rows[(S, "demo")]
    assert (failed["answers"], failed["failed"], failed["accuracy"]) == (2, 2, 0.0)
    assert failed["input_tokens"] is None
    assert "2 planned answer(s) failed and count zero" in done.stdout
    document = json.loads((tmp_path / "out" / "probes.json").read_text())
    assert len(document["failures"]) == 2
    assert document["failures"][0]["error"].startswith("summary: ModelDeadlineExceeded")


def test_probe_files_given_with_probes_ask_about_any_history(tmp_path: Path) -> None:
    from replay.measures.probes.files import load_probe_file

    (instance, history, bundled) = panel("demo")[0]
    mine = bundled.model_dump(mode="json")
    mine["cohort"] = "mine"
    mine["probes"][0]["id"] = "asked-here"
    mine["probes"][0]["question"] = "Asked from a file given on the command line?"
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(mine))
    given = load_probe_file(path)
    with ScriptedServer(*reader_scripts([(instance, history, given)])) as server:
        done = run_replay("probe", "--method", "full", "--instance", instance.instance_id,
                          "--probes", str(path), "--model", "reader", "--answers", "1",
                          "--store", str(tmp_path / "r.db"), "--out", str(tmp_path / "out"),
                          env=models_file(tmp_path, server.base_url))
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((tmp_path / "out" / "probes.json").read_text())
    assert [a["probe"] for a in document["answers"]] == ["asked-here"]
    assert table(tmp_path / "out")[("full", "mine")]["all_correct"] == 1.0
