"""A cell's result is a record: its fault and its spend are stored with it and read back equal,
and the rows of stores written before faults were records (an `error` line, a traceback in the
diagnostics, a partial `spent`) read back as records too."""

from __future__ import annotations

import json
from pathlib import Path

from store_rows import plant, rows

from replay.compaction.sources import PromptText
from replay.compaction.summarize import parse_summarizer
from replay.core.errors import EnvironmentFault, Fault
from replay.core.vocab import CellStatus, FaultKind
from replay.environments.base import Environment
from replay.environments.recipes import Recipe
from replay.instances.records import Instance
from replay.models.cache import CallCache
from replay.models.types import ModelSpec
from replay.pipeline.cell import CellTask, Settings, run_cell
from replay.pipeline.summary import Summarizer
from replay.records.cell import CellId, CellResult
from replay.records.snapshot import Snapshot
from replay.records.spend import Spend
from replay.report.tables import build, diagnostics
from replay.store import Store
from replay.store.runs import keep_cell, load_cells

from agent_scripts import mini_history
from conftest import closed_port_url, make_client

CELL = CellId("one", "post", "m:codex", 0)


def fault() -> Fault:
    try:
        raise EnvironmentFault("the container vanished")
    except EnvironmentFault as exc:
        return Fault.of(exc, "summarizer")


def test_a_result_with_a_fault_and_a_spend_reads_back_equal(tmp_path: Path) -> None:
    spent = Spend(input_tokens=1200, output_tokens=80, cached_tokens=600, cost=0.0125, saved=0.01)
    failed = CellResult(CELL, CellStatus.ERROR, summary="s" * 64, fault=fault(), spent=spent,
                        seconds=2.5)
    done = CellResult(CellId("one", "pre", "", 0), CellStatus.DONE, True, "c" * 64)
    with Store.open(tmp_path / "replay.db") as store:
        keep_cell(store, "r", failed)
        keep_cell(store, "r", done)
        loaded = load_cells(store, "r")
    stored = json.loads(rows(tmp_path / "replay.db",
                             "SELECT record FROM cells WHERE arm='post'")[0][0])
    assert loaded == {failed.cell: failed, done.cell: done}
    assert loaded[CELL].fault.traceback.rstrip().endswith("the container vanished")
    assert stored["fault"]["kind"] == "harness" and "error" not in stored
    assert stored["spent"]["cost"] == 0.0125


def test_a_cell_stored_with_an_error_line_reads_back_as_its_fault(tmp_path: Path) -> None:
    line = "input: InputError: summarizer: unknown prompt 'x'"
    legacy = json.dumps({"continuation": None, "summary": None, "reused": False,
                         "diagnostics": {"traceback": "Traceback (most recent call last):\n"},
                         "spent": {"input_tokens": 40, "cost": 0.5}, "error": line,
                         "seconds": 1.0})
    Store.open(tmp_path / "replay.db").close()
    plant(tmp_path / "replay.db", "INSERT INTO cells VALUES ('r', 'one', 'post', 'm:codex', 0, "
          "'error', NULL, ?, 0)", legacy)
    with Store.open(tmp_path / "replay.db") as store:
        result = load_cells(store, "r")[CELL]
    assert result.status is CellStatus.ERROR
    assert (result.fault.kind, result.fault.name, result.fault.stage) == (
        FaultKind.INPUT, "InputError", "summarizer")
    assert result.fault.text() == line
    assert result.fault.traceback == "Traceback (most recent call last):\n"
    assert result.diagnostics == {}
    assert result.spent == Spend(input_tokens=40, cost=0.5)


def test_the_report_shows_an_old_error_line_as_it_was(tmp_path: Path) -> None:
    line = "harness: EnvironmentFault: exec failed (exit 137): killed"
    plan = ('{"kind":"backbone","agent":"agent","agent_id":"openai:agent@http://127.0.0.1:1/v1",'
            '"instances":["one"],"summarizers":["m:codex"]}')
    legacy = json.dumps({"continuation": None, "summary": None, "reused": False,
                         "diagnostics": {}, "spent": {}, "error": line, "seconds": 1.0})
    Store.open(tmp_path / "replay.db").close()
    plant(tmp_path / "replay.db", "INSERT INTO runs VALUES ('old', 'digest', ?, 0, 0)", plan)
    plant(tmp_path / "replay.db", "INSERT INTO cells VALUES ('old', 'one', 'pre', '', 0, "
          "'error', NULL, ?, 0)", legacy)
    with Store.open(tmp_path / "replay.db") as store:
        report = build(store, "old")
    assert report.outcomes[("one", "m:codex")].cause == f"one pre seed 0: {line}"
    assert [row["error"] for row in diagnostics(report)] == [line]  # as cells.csv has it


def test_a_cell_that_bad_input_stops_keeps_its_fault_with_the_stage(
        tiny: Instance, tmp_path: Path) -> None:
    """A POST whose prompt has no text: the summarizer stage raises bad input before any model
    is called or any environment started; the cell keeps the fault, stage and traceback, and
    prints the line cells always printed."""
    snapshot = Snapshot(base_commit=tiny.base_commit, diff=b"", fingerprint="f")
    empty = PromptText(name="codex", agent="codex", registry="npm", package="p", version="1",
                       digest="sha512-x", parts={}, synced_at="2026-01-01T00:00:00Z")
    spec = ModelSpec(alias="summ", provider="openai", model="summ-1", base_url=closed_port_url())
    task = CellTask(CellId(tiny.instance_id, "post", "summ:codex", 0), tiny,
                    mini_history(tiny.instance_id, tiny.problem_statement, snapshot),
                    Summarizer(parse_summarizer("summ:codex"), backbone=spec, prompt=empty))

    def no_environment(instance: Instance) -> tuple[Environment, Recipe]:
        raise AssertionError("the environment is not started for a summary that failed")

    with Store.open(tmp_path / "replay.db") as store, CallCache(tmp_path / "replay.db") as cache:
        result = run_cell(task, Settings(spec), store, no_environment,
                          lambda wanted: make_client(wanted, cache))
        keep_cell(store, "r", result)
        loaded = load_cells(store, "r")[task.cell]
    assert result.status is CellStatus.ERROR and result.fault is not None
    assert (result.fault.kind, result.fault.name, result.fault.stage) == (
        FaultKind.INPUT, "InputError", "summarizer")
    assert result.fault.text() == \
        "input: InputError: summarizer: prompt codex has no user or system text"
    assert "in run_cell" in result.fault.traceback
    assert result.fault.traceback.rstrip().endswith(
        "InputError: prompt codex has no user or system text")
    assert loaded == result
