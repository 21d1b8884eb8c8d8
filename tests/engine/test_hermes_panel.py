"""The ReMe panel (instances/reme) and its 13-arm comparison, run
as a user runs it with scripted models: a reader that answers from what its context shows, a
summarizer whose S drops every fact and whose H keeps a short body, and an evidence judge."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from replay.measures.probes.ceiling import task_ceiling
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from conftest import run_replay
from hermes_scripts import NO_USER, save_hermes
from probe_scripts import DROPPED, judge_scripts, models_file, panel, reader_scripts
from sweep_scripts import fixture_prompts

SUITE = "reme"
H_BODY = NO_USER + ("## Critical Context\nThe agent read the workspace and has not written "
                     "findings.py yet.")


def test_a_dry_run_prints_the_studys_counts() -> None:
    done = run_replay("probe", "--suite", SUITE, "--model", "reader", "--study-arms", "summ",
                      "--dry-run")
    assert done.returncode == 0, done.stderr
    assert ("14 histories (10 control, 4 primary), 13 arms, 3 generation(s), 2 answer(s) per "
            "probe: 546 contexts, 1,092 answers") in done.stdout
    assert "arm 8: summ:hermes-h" in done.stdout and "arm 13: summ:hermes-h+top:5" in done.stdout
    # every answer at most its context's bound: Full's complete input, else the task's ceiling;
    # each S read once, each H up to three times, the one judge once, per generation and task
    ceilings = [task_ceiling(history, probes) for _, history, probes in panel(SUITE)]
    answers = sum(3 * 2 * (c.full_tokens + 12 * c.base) for c in ceilings)
    summaries = sum((3 + 3 * 3 + 1) * c.full_tokens for c in ceilings)
    assert (f"answers at most {answers:,} input tokens" in done.stdout
            and f"summaries and judges about {summaries:,}" in done.stdout), done.stdout


def test_the_13_arm_table_prints_and_its_counts_match_the_plan(tmp_path: Path) -> None:
    items = panel(SUITE)
    catalogue = fixture_prompts(tmp_path)
    save_hermes(catalogue)
    judges = [replace(script, model="summ") for script in judge_scripts(items)]
    scripts = [*reader_scripts(items), *judges,
               Script([{"content": H_BODY}], model="summ",
                      contains="Create a structured checkpoint summary"),
               Script([{"content": DROPPED}], model="summ")]
    with ScriptedServer(*scripts) as server:
        env = models_file(tmp_path, server.base_url)
        with (tmp_path / ".config" / "replay" / "models.toml").open("a") as handle:
            handle.write(f'\n["summ"]\nprovider = "openai"\nmodel = "summ"\n'
                         f'base_url = "{server.base_url}"\n')
        done = run_replay("probe", "--suite", SUITE, "--model", "reader", "--study-arms", "summ",
                          "--prompt-sources", str(catalogue), "--store",
                          str(tmp_path / "r.db"), "--out", str(tmp_path / "out"), env=env)
    # An H alone must be shorter than Full: on 9 control contexts it is not (their histories
    # are one or two short reads), so those fail, count zero and make the exit code 1.
    assert done.returncode == 1, done.stdout + done.stderr
    document = json.loads((tmp_path / "out" / "probes.json").read_text())
    assert len(document["contexts"]) == 546 and len(document["answers"]) == 1092
    rows = {(row["method"], row["cohort"]): row for row in document["rows"]}
    methods = dict.fromkeys(method for method, _ in rows)
    assert len(methods) == 13 and "summ:hermes-h+top:5" in methods
    for cohort, count in (("primary", 4), ("control", 10)):
        full = rows[("full", cohort)]
        assert (full["accuracy"], full["all_correct"], full["n"]) == (1.0, 1.0, count)
        assert full["answers"] == count * 3 * 2  # every arm once per generation, two answers
        assert rows[("summ:claude-code", cohort)]["accuracy"] < 1.0
        assert rows[("summ:hermes-h", cohort)]["all_correct"] == 0.0
        assert all(rows[(m, cohort)]["input_tokens"] > 0 for m in methods)
    assert rows[("summ:hermes-h+top:5", "control")]["accuracy"] == 1.0
    h_control = rows[("summ:hermes-h", "control")]
    assert (h_control["failed"], h_control["answers"]) == (18, 60)  # failures stay counted
    lengths = [c["length"] for c in document["contexts"] if c["method"] == "summ:hermes-h"]
    assert sum(bool(length.get("shorter_than_full")) for length in lengths) == 33
    shrinkage = {(s["method"], s["cohort"]): (s["shorter"], s["contexts"])
                 for s in document["shrinkage"]}
    assert len({method for method, _ in shrinkage}) == 12  # every arm but Full
    assert shrinkage[("summ:hermes-h", "primary")] == (12, 12)
    assert shrinkage[("summ:hermes-h", "control")] == (21, 30)
    assert "summ:hermes-h: strictly shorter primary 12/12, control 21/30; within the ceiling " \
           "primary 12/12, control 30/30" in done.stdout
    assert "summ:hermes-h+top:3" in done.stdout and "primary" in done.stdout
    assert "summ:hermes-h: 42/42 summaries within their allowance, 33/42 contexts valid" \
        in done.stdout
    assert "is not shorter than Full's" in done.stdout


def test_an_h_over_its_allowance_scores_zero_with_no_fallback(tmp_path: Path) -> None:
    items = [item for item in panel(SUITE) if item[0].instance_id == "reme__payment-1"]
    catalogue = fixture_prompts(tmp_path)
    save_hermes(catalogue)
    long_body = NO_USER + "## Critical Context\n" + " ".join(["word"] * 400)
    scripts = [*reader_scripts(items), Script([{"content": long_body}], model="summ")]
    with ScriptedServer(*scripts) as server:
        env = models_file(tmp_path, server.base_url)
        with (tmp_path / ".config" / "replay" / "models.toml").open("a") as handle:
            handle.write(f'\n["summ"]\nprovider = "openai"\nmodel = "summ"\n'
                         f'base_url = "{server.base_url}"\n')
        done = run_replay("probe", "--suite", SUITE, "--instance", "reme__payment-1",
                          "--method", "summ:hermes-h", "--model", "reader", "--generations", "1",
                          "--answers", "1", "--prompt-sources", str(catalogue), "--store",
                          str(tmp_path / "r.db"), "--out", str(tmp_path / "out"), env=env)
        summaries = [r for r in server.requests if r.body["model"] == "summ"]
    assert done.returncode == 1, done.stdout + done.stderr  # a planned answer failed
    assert len(summaries) == 3  # three attempts, then no fallback
    rows = {(row["method"], row["cohort"]): row
            for row in json.loads((tmp_path / "out" / "probes.json").read_text())["rows"]}
    assert rows[("summ:hermes-h", "primary")]["accuracy"] == 0.0
    assert rows[("summ:hermes-h", "primary")]["failed"] == 1
    assert rows[("full", "primary")]["accuracy"] == 1.0
    assert "summary: invalid: hermes-h: 419 tokens after 3 attempts, over the allowance of 256" \
        in done.stdout
    assert "summ:hermes-h: 0/1 summaries within their allowance, 0/1 contexts valid" \
        in done.stdout
