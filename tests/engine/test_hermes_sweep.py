"""The study's H in a sweep through `replay.api`, with scripted models on 127.0.0.1: an H still over
its allowance after its three attempts is the method's own failure, a POST that fails with
nothing continued (PRE passing, the pair is damaged), never an `error` cell, and it is kept:
the next run asks nothing again."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from rich.console import Console

from replay import api
from replay.commands.cell import show
from replay.core.vocab import CellStatus, ExitReason
from replay.instances.records import load_suite
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.store import Store, summaries
from replay.store.runs import load_cells

from agent_scripts import fixing_turns
from demo_sweep import environment, sweep_options
from hermes_scripts import NO_USER, save_hermes
from sweep_scripts import fixture_prompts

SUITE = "reme"
PAYMENT = "reme__payment-1"
LONG_BODY = NO_USER + "## Critical Context\n" + " ".join(["word"] * 400)


def models_env(home: Path, url: str) -> dict[str, str]:
    path = home / ".config" / "replay" / "models.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f'["{alias}"]\nprovider = "openai"\nmodel = "{alias}"\n'
                            f'base_url = "{url}"\n' for alias in ("agent", "summ")))
    return {"HOME": str(home)}


def test_an_h_over_its_allowance_fails_its_post_and_is_never_an_error(tmp_path: Path) -> None:
    instance = next(i for i in load_suite(SUITE).instances if i.instance_id == PAYMENT)
    catalogue = fixture_prompts(tmp_path)
    save_hermes(catalogue)
    path = tmp_path / "r.db"
    with ScriptedServer(Script(fixing_turns(instance, tmp_path), model="agent"),
                        Script([{"content": LONG_BODY}], model="summ")) as server, \
            environment(models_env(tmp_path, server.base_url)):
        plan = api.plan("prompt", api.summarizers(["summ"], "hermes-h"), "agent", suite=SUITE,
                        ids=[PAYMENT], prompt_sources=catalogue)
        done = api.sweep(plan, sweep_options(path), "r")
        asked = [request.body["model"] for request in server.requests]
        assert done.code == 0 and not done.result.errors, done.result
        assert asked.count("summ") == 3 and asked.count("agent") == 4  # PRE only: no POST run
        again = api.sweep(plan, sweep_options(path), "r")
        assert again.code == 0 and server.count == len(asked)  # kept: nothing asked
        assert again.result.results == []
    with Store.open(tmp_path / "r.db") as store:
        cells = {str(cell): result for cell, result in load_cells(store, "r").items()}
        post = cells[f"{PAYMENT} post summ:hermes-h seed 0"]
        assert cells[f"{PAYMENT} pre seed 0"].passed is True
        assert (post.status, post.passed, post.fault, post.refused) == (
            CellStatus.DONE, False, None, None)
        assert post.diagnostics["exit_reason"] == ExitReason.INVALID_SUMMARY
        assert post.diagnostics["summary_invalid"] == (
            "hermes-h: 419 tokens after 3 attempts, over the allowance of 256")
        shown = Console(file=io.StringIO(), width=200)
        show(api.CellRun(post.cell, post, None, None), shown)
        assert ("the summary breaks its method's rules: hermes-h: 419 tokens after 3 attempts"
                in shown.file.getvalue())
        kept = summaries.summary(store, post.summary)
        assert kept is not None and kept.invalid == post.diagnostics["summary_invalid"]
        assert [a["target"] for a in kept.details["attempts"]] == [256, 204, 163]
    api.export(path, "r", tmp_path / "out")
    with (tmp_path / "out" / "outcomes.csv").open() as handle:
        assert [(row["label"], row["refused"]) for row in csv.DictReader(handle)] == [
            ("damaged", "")]
    with (tmp_path / "out" / "cells.csv").open() as handle:
        rows = {row["arm"]: row for row in csv.DictReader(handle)}
    assert (rows["post"]["result"], rows["post"]["exit"], rows["post"]["error"]) == (
        "fail", "invalid_summary", "")
