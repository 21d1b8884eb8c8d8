"""Labels, confirmation, plans and reports, from cells written straight into a store."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from replay.errors import InputError
from replay.report.exports import to_markdown, write
from replay.report.tables import build
from replay.sweep.labels import confirmation, label
from replay.sweep.plan import (
    CellId,
    CellResult,
    Plan,
    bind_run,
    load_cells,
    open_store,
    pending,
    record_cell,
    save_run,
)

PLAN = Plan(kind="prompt", agent="agent", agent_id="openai:agent@http://127.0.0.1:1/v1",
            instances=("one", "two", "three", "four"),
            summarizers=("m:codex", "m:kimi-code", "anchor_index"),
            confirm=(("one", "m:codex"),))


def done(instance: str, arm: str, summarizer: str, passed: bool, seed: int = 0) -> CellResult:
    return CellResult(CellId(instance, arm, summarizer, seed), "done", passed,
                      diagnostics={"steps": 3, "actions": 4, "exit_reason": "finished",
                                   "repeated_reads": 1, "tests_run": 2, "files_edited": ["a"],
                                   "summary": {"target_files": [1, 1], "gold_tokens": [2, 5]}})


def test_labels_and_confirmation() -> None:
    assert [label(True, True), label(True, False), label(False, True), label(False, False)] == [
        "preserved", "damaged", "rescued", "unsolved"]
    assert confirmation((False, False, None)) == "stable"
    assert confirmation((False, True, False)) == "stable"
    assert confirmation((False, True, True)) == "seed-variable"
    assert confirmation((False, True, None)) == "pending"
    assert confirmation((False, None, None)) == "pending"


def test_a_plan_has_one_pre_per_instance_shared_by_its_summarizers() -> None:
    cells = PLAN.cells()
    assert len(cells) == 4 * (1 + 3) + 2
    assert sum(cell.arm == "pre" for cell in cells) == 4
    assert CellId("one", "post", "m:codex", 2) in cells
    assert PLAN.default_name() == PLAN.model_copy().default_name()
    assert PLAN.default_name() != PLAN.model_copy(update={"steps": 9}).default_name()


def test_runs_resume_extend_and_refuse_another_frame(tmp_path: Path) -> None:
    with open_store(tmp_path / "replay.db") as store:
        save_run(store, "r", PLAN)
        wider = PLAN.model_copy(update={"instances": ("five",), "summarizers": ("tail:100",)})
        extended = bind_run(store, "r", wider)
        assert extended.instances == ("one", "two", "three", "four", "five")
        assert extended.summarizers[-1] == "tail:100" and extended.confirm == PLAN.confirm
        with pytest.raises(InputError, match="run 'r' belongs to a different plan \\(carrier"):
            bind_run(store, "r", PLAN.model_copy(update={"carrier": "native"}))


@pytest.fixture
def report_store(tmp_path: Path) -> Path:
    """A run whose cells give every label: one preserved/damaged (confirmed stable by codex),
    two rescued/unsolved, three with an error and an unfinished cell, four excluded."""
    path = tmp_path / "runs" / "replay.db"
    with open_store(path) as store:
        save_run(store, "r", PLAN)
        for instance in ("one", "two", "three"):
            store.record_validation(instance, "local", "valid", [], {})
        store.record_validation("four", "local", "excluded", ["not solvable"], {})
        cells = [done("one", "pre", "", True), done("one", "post", "m:codex", False),
                 done("one", "post", "m:codex", False, 1),
                 done("one", "post", "m:codex", True, 2),
                 done("one", "post", "m:kimi-code", True),
                 done("one", "post", "anchor_index", True),
                 done("two", "pre", "", False), done("two", "post", "m:codex", True),
                 done("two", "post", "m:kimi-code", False),
                 done("three", "pre", "", True), done("three", "post", "m:codex", True),
                 CellResult(CellId("three", "post", "m:kimi-code", 0), "error",
                            error="harness: ModelTransientError: 500")]
        for cell in cells:
            record_cell(store, "r", cell)
        assert len(pending(PLAN, load_cells(store, "r"))) == 16 + 2 - 11
    return path


def test_the_report_shows_every_label_rate_and_export(report_store: Path) -> None:
    with open_store(report_store) as store:
        report = build(store, "r")
        paths = write(report, report_store.parent / "reports" / "r")
    codes = {pair: outcome for pair, outcome in report.outcomes.items()}
    assert codes[("one", "m:codex")].label == "damaged"
    assert codes[("one", "m:codex")].confirmation == "stable"
    assert codes[("one", "m:codex")].post_runs == (False, False, True)
    assert codes[("two", "m:codex")].label == "rescued"
    assert codes[("two", "m:kimi-code")].label == "unsolved"
    assert codes[("three", "m:kimi-code")].label == "error"
    assert "500" in (codes[("three", "m:kimi-code")].cause or "")
    assert codes[("three", "anchor_index")].label == "unevaluated"
    assert codes[("four", "m:codex")].label == "excluded"
    rates = {rate.summarizer: rate for rate in report.rates}
    assert (rates["m:codex"].damaged, rates["m:codex"].pre_pass, rates["m:codex"].stable) == (
        1, 2, 1)
    assert rates["m:kimi-code"].pre_pass == 1 and rates["m:kimi-code"].rate == 0
    prompts = {row.prompt: (row.post_pass, row.pre_pass) for row in report.prompts}
    assert prompts == {"codex": (1, 2), "kimi-code": (1, 1), "anchor_index": (1, 1)}

    names = sorted(path.name for path in paths)
    assert names == ["cells.csv", "heatmap.png", "outcomes.csv", "report.json", "report.md"]
    folder = paths[0].parent
    exported = json.loads((folder / "report.json").read_text())
    assert {o["code"] for o in exported["outcomes"]} == {"P", "D!", "R", "U", "E", "-", "X"}
    rows = list(csv.DictReader((folder / "cells.csv").open()))
    assert len(rows) == 12
    codex = next(r for r in rows if r["summarizer"] == "m:codex" and r["seed"] == "1")
    assert (codex["result"], codex["repeated_reads"], codex["summary_tokens"]) == (
        "fail", "1", "2/5")
    assert "| one | D! | P | P |" in to_markdown(report)
    assert (folder / "heatmap.png").read_bytes().startswith(b"\x89PNG")
