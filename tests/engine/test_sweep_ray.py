"""The same plan on a local Ray instance and on the local executor gives the same table, and
the driver hears of the calls the actors made and their seconds."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from replay.compaction.sources import PromptText
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.pipeline.continuation import model_id
from replay.records.plan import Plan
from replay.report.tables import build
from replay.store import Store
from replay.store.runs import load_cells, save_run
from replay.sweep.execution import SweepResult, execute, validate
from replay.sweep.executors import LocalExecutor, RayExecutor
from replay.sweep.progress import SweepProgress
from replay.sweep.run import RunOptions, loaded

from sweep_scripts import STOCKROOM, agent_scripts, summarizer_scripts

ray = pytest.importorskip("ray")

CLAUDE_CODE = PromptText(name="claude-code", agent="claude-code", registry="npm",
                         package="fixture", version="0", digest="sha512-fixture",
                         parts={"user": "CLAUDE-FIXTURE: summarize in <summary> tags."},
                         synced_at="2026-01-01T00:00:00Z")
# Token counts are left out: the scripted server numbers tool call ids in the order it serves
# them, so the same reply can be a character longer in one run than in another.
COMPARED = ("steps", "actions", "exit_reason", "repeated_reads", "tests_run", "files_edited")


def sweep(server: ScriptedServer, store_path: Path, executor_name: str) -> SweepResult:
    """A backbone sweep of summ-a and summ-b on one demo instance, two workers."""
    agent = server.spec("agent")
    summarizers = tuple(f"openai:{m}@{server.base_url}:claude-code" for m in ("summ-a", "summ-b"))
    plan = Plan(kind="backbone", agent=f"openai:agent@{server.base_url}",
                agent_id=model_id(agent), instances=(STOCKROOM,), summarizers=summarizers)
    with Store.open(store_path) as store, CallCache(store_path) as cache:
        run = loaded(store, "run", plan, RunOptions(store_path, workers=2), agent,
                     lambda name: CLAUDE_CODE)
        save_run(store, "run", plan)
        executor = RayExecutor(run) if executor_name == "ray" else LocalExecutor(run)
        try:
            with SweepProgress(Console(quiet=True), 3, quiet=True) as progress:
                run, validated = validate(run, store, cache, executor, progress)
                return replace(execute(run, store, cache, executor, progress),
                               validated=validated)
        finally:
            executor.close()


def table(store_path: Path) -> dict:
    """Labels, and each cell's verdict and diagnostics, of the store's run."""
    with Store.open(store_path) as store:
        report = build(store, "run")
        cells = {str(cell): (result.status, result.passed, result.continuation,
                             {k: result.diagnostics[k] for k in COMPARED})
                 for cell, result in load_cells(store, "run").items()}
    labels = {pair: outcome.label for pair, outcome in report.outcomes.items()}
    return {"labels": labels, "cells": cells}


def test_ray_gives_the_table_of_the_local_executor(tmp_path: Path) -> None:
    with ScriptedServer(*summarizer_scripts(), *agent_scripts(tmp_path)) as server:
        local = sweep(server, tmp_path / "local" / "replay.db", "local")
        local_requests = server.count
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            remote = sweep(server, tmp_path / "ray" / "replay.db", "ray")
        finally:
            ray.shutdown()
        remote_requests = server.count - local_requests
        # the driver kept every call, summary and continuation the actors made
        again = sweep(server, tmp_path / "ray" / "replay.db", "local")
        again_requests = server.count - local_requests - remote_requests
    assert local.ran == remote.ran == 1 + 2
    assert not local.errors and not remote.errors
    assert local_requests == remote_requests == 1 + 2 * 2
    assert again_requests == 0 and again.results == []
    for result, store in ((local, "local"), (remote, "ray")):
        rows = sqlite3.connect(tmp_path / store / "replay.db").execute(
            "SELECT COUNT(*), SUM(seconds), SUM(output_tokens) FROM model_calls").fetchone()
        spent = [cell.spent for cell in result.results]
        assert sum(s.calls for s in spent) == rows[0] == 5
        assert sum(s.call_seconds for s in spent) == pytest.approx(rows[1])
        assert sum(s.output_tokens for s in spent) == rows[2]
    expected = table(tmp_path / "local" / "replay.db")
    assert table(tmp_path / "ray" / "replay.db") == expected
    labels = set(expected["labels"].values())
    assert labels == {"preserved", "damaged"}
