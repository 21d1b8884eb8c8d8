"""Labels, confirmation, plans and reports, from cells written straight into a store."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from matplotlib.text import Text as MplText
from rich.console import Console
from store_rows import plant

from replay.core.errors import Fault, InputError
from replay.core.vocab import FaultKind, ValidationStatus
from replay.records.cell import CellId, CellResult
from replay.records.plan import Plan
from replay.records.validation import Validation
from replay.report.exports import heatmap_figure, write
from replay.report.markdown import to_markdown
from replay.report.marks import code
from replay.report.tables import build, diagnostics, render
from replay.store import Store, validations
from replay.store.runs import keep_cell, load_cells, save_run
from replay.sweep.labels import confirmation, label
from replay.sweep.plan import bind_run, pending

from conftest import run_replay

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
    with Store.open(tmp_path / "replay.db") as store:
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
    with Store.open(path) as store:
        save_run(store, "r", PLAN)
        for instance in ("one", "two", "three"):
            validations.keep(store, "local", Validation(instance, ValidationStatus.VALID, []))
        validations.keep(store, "local",
                         Validation("four", ValidationStatus.EXCLUDED, ["not solvable"]))
        cells = [done("one", "pre", "", True), done("one", "post", "m:codex", False),
                 done("one", "post", "m:codex", False, 1),
                 done("one", "post", "m:codex", True, 2),
                 done("one", "post", "m:kimi-code", True),
                 done("one", "post", "anchor_index", True),
                 done("two", "pre", "", False), done("two", "post", "m:codex", True),
                 done("two", "post", "m:kimi-code", False),
                 done("three", "pre", "", True), done("three", "post", "m:codex", True),
                 CellResult(CellId("three", "post", "m:kimi-code", 0), "error",
                            fault=Fault(FaultKind.HARNESS, "ModelTransientError", "500"))]
        for cell in cells:
            keep_cell(store, "r", cell)
        assert len(pending(PLAN, load_cells(store, "r"))) == 16 + 2 - 11
    return path


def test_the_report_shows_every_label_rate_and_export(report_store: Path) -> None:
    with Store.open(report_store) as store:
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
    assert names == ["cells.csv", "damage.png", "heatmap.png", "outcomes.csv", "pairs.csv",
                     "report.json", "report.md"]  # retention.png once retention is scored
    folder = paths[0].parent
    exported = json.loads((folder / "report.json").read_text())
    assert {o["code"] for o in exported["outcomes"]} == {"P", "D!", "R", "U", "E", "-", "X"}
    rows = list(csv.DictReader((folder / "cells.csv").open()))
    assert len(rows) == 12
    codex = next(r for r in rows if r["summarizer"] == "m:codex" and r["seed"] == "1")
    assert (codex["result"], codex["repeated_reads"], codex["summary_identifiers"]) == (
        "fail", "1", "2/5")
    assert "| one | D! | P | P |" in to_markdown(report)
    for image in ("heatmap.png", "damage.png"):
        assert (folder / image).read_bytes().startswith(b"\x89PNG")


LONG_INSTANCE = "replay-demo__an-instance-whose-name-runs-on-past-the-usual-width-1"
LONG_MODEL = "openai:smollm2-360m-instruct@http://127.0.0.1:8080/v1"
PROMPT_NAMES = ("claude-code", "codex", "gemini-cli", "opencode", "kimi-code")


@pytest.fixture
def long_names(tmp_path: Path) -> Path:
    """A prompt sweep run on an ad-hoc model with a long name, over an instance with a long
    id; one POST refused (its reason holds markup, `[/x]`). Run names are held to a safe set
    (issue 21), so markup in one is refused where it enters."""
    path = tmp_path / "runs" / "replay.db"
    plan = Plan(kind="prompt", agent="agent", agent_id="openai:agent@http://127.0.0.1:1/v1",
                instances=(LONG_INSTANCE, "short-1"),
                summarizers=(*(f"{LONG_MODEL}:{name}" for name in PROMPT_NAMES),
                             "anchor_index"))
    with Store.open(path) as store:
        save_run(store, "piped-run", plan)
        for instance in plan.instances:
            validations.keep(store, "local", Validation(instance, ValidationStatus.VALID, []))
            keep_cell(store, "piped-run", done(instance, "pre", "", True))
            for index, summarizer in enumerate(plan.summarizers):
                cell = done(instance, "post", summarizer, index % 2 == 0)
                if summarizer.endswith("codex"):
                    cell = replace(cell, refused="agent request refused: model 'agent' refused "
                                                 "[/x] the request")
                keep_cell(store, "piped-run", cell)
    return path


def test_piped_tables_keep_every_name_whole(long_names: Path) -> None:
    done = run_replay("report", "piped-run", "--cells", "--store", str(long_names),
                      env={"COLUMNS": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "…" not in done.stdout and "piped-run" in done.stdout
    grid = lines[:lines.index(next(line for line in lines if line.startswith("P preserved")))]
    assert "outcomes of run piped-run (summarizers: model smollm2-360m-instruct)" in grid[0]
    assert f"claude-code = {LONG_MODEL}:claude-code" in done.stdout  # the legend: full names
    header = next(line for line in grid if "claude-code" in line)
    assert all(name in header for name in (*PROMPT_NAMES, "anchor_index"))
    assert LONG_MODEL not in header  # the columns are told apart by their prompt
    assert sum(LONG_INSTANCE in line for line in lines) == 1 + 7  # the grid and 7 cells
    refused = next(line for line in lines if LONG_INSTANCE in line and "codex" in line)
    assert " agent " in refused and "D*" in done.stdout


def test_a_narrow_terminal_keeps_instance_names_whole(long_names: Path) -> None:
    out = io.StringIO()
    with Store.open(long_names) as store:
        render(build(store, "piped-run"), Console(file=out, width=100), cells=True)
    assert sum(LONG_INSTANCE in line for line in out.getvalue().splitlines()) == 1 + 7


def test_the_heatmap_shows_whole_labels_axis_titles_and_damage_rates(long_names: Path) -> None:
    with Store.open(long_names) as store:
        report = build(store, "piped-run")
    figure = heatmap_figure(report)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    assert [label.get_text() for label in axes.get_yticklabels()] == [LONG_INSTANCE, "short-1"]
    assert [label.get_text() for label in axes.get_xticklabels()] == [*PROMPT_NAMES,
                                                                        "anchor_index"]
    assert axes.get_xlabel() == "summarizer (model smollm2-360m-instruct)"
    assert axes.get_ylabel() == "instance"
    top = axes.child_axes[0]  # the secondary axis along the top
    assert top.get_xlabel() == "task damage (damaged / PRE-pass)"
    assert [label.get_text() for label in top.get_xticklabels()][:2] == ["0/2 (0.0%)",
                                                                         "2/2 (100.0%)"]
    texts = figure.findobj(lambda artist: isinstance(artist, MplText) and artist.get_text())
    assert len(texts) > 20
    for text in texts:  # every label lies whole inside the image
        box = text.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= figure.bbox.width, text.get_text()
        assert box.y0 >= 0 and box.y1 <= figure.bbox.height, text.get_text()


def test_a_run_stored_before_temperature_and_refusals_loads_as_it_ran(tmp_path: Path) -> None:
    legacy_plan = ('{"kind":"backbone","suite":"demo","dataset":null,"agent":"agent",'
                   '"agent_id":"openai:agent@http://127.0.0.1:1/v1","carrier":"summary-only",'
                   '"steps":8,"prompt_sources":null,"backend":"local","instances":["one"],'
                   '"summarizers":["m:codex"],"confirm":[]}')
    legacy_cell = json.dumps({"continuation": "c" * 64, "summary": None, "reused": False,
                              "diagnostics": {}, "spent": {}, "error": None, "seconds": 1.0})
    Store.open(tmp_path / "replay.db").close()
    plant(tmp_path / "replay.db", "INSERT INTO runs VALUES ('old', 'digest', ?, 0, 0)",
          legacy_plan)
    plant(tmp_path / "replay.db",
          "INSERT INTO cells VALUES ('old', 'one', 'pre', '', 0, 'done', 1, ?, 0)", legacy_cell)
    with Store.open(tmp_path / "replay.db") as store:
        validations.keep(store, "local", Validation("one", ValidationStatus.VALID, []))
        report = build(store, "old")
    assert report.plan.temperature == 0.0  # what runs made before it was a setting sampled at
    assert report.cells[CellId("one", "pre", "", 0)].refused is None
    assert report.outcomes[("one", "m:codex")].label == "unevaluated"


def refused(instance: str, arm: str, summarizer: str, steps: int, passed: bool = False,
            seed: int = 0) -> CellResult:
    """A cell whose agent request was refused for its length after `steps` steps."""
    cell = done(instance, arm, summarizer, passed, seed)
    return replace(cell, refused="agent request refused: context length exceeded",
                   diagnostics={**cell.diagnostics, "steps": steps, "exit_reason": "refused"})


def test_a_pair_whose_history_never_fit_is_unevaluated_not_unsolved(tmp_path: Path) -> None:
    """Issue 25: a pair whose agent request never fit the context was labelled `unsolved`, and
    the damage table's `refused` column said 0 when every cell was refused."""
    plan = PLAN.model_copy(update={"instances": ("one", "two"), "confirm": ()})
    with Store.open(tmp_path / "replay.db") as store:
        save_run(store, "r", plan)
        for cell in (refused("one", "pre", "", 0), done("one", "post", "m:codex", True),
                     done("one", "post", "m:kimi-code", False),
                     refused("one", "post", "anchor_index", 0),
                     done("two", "pre", "", True), refused("two", "post", "m:codex", 0),
                     refused("two", "post", "m:kimi-code", 2), done("two", "post", "anchor_index",
                                                                   True)):
            keep_cell(store, "r", cell)
        report = build(store, "r")
    found = {pair: (outcome.label, outcome.pre, outcome.post, code(outcome))
             for pair, outcome in report.outcomes.items()}
    assert found == {("one", "m:codex"): ("unevaluated", None, True, "-#"),  # not rescued
                     ("one", "m:kimi-code"): ("unevaluated", None, False, "-#"),  # nor unsolved
                     ("one", "anchor_index"): ("unevaluated", None, False, "-#"),
                     ("two", "m:codex"): ("damaged", True, False, "D#"),  # its POST never ran
                     ("two", "m:kimi-code"): ("damaged", True, False, "D*"),  # it ran 2 steps
                     ("two", "anchor_index"): ("preserved", True, True, "P")}
    assert report.outcomes[("one", "anchor_index")].not_run == (
        "PRE agent request refused: context length exceeded; POST agent request refused: "
        "context length exceeded")
    assert report.outcomes[("two", "m:kimi-code")].not_run is None
    assert {rate.summarizer: (rate.pre_pass, rate.damaged, rate.refused)
            for rate in report.rates} == {"m:codex": (1, 1, 2), "m:kimi-code": (1, 1, 2),
                                          "anchor_index": (1, 0, 1)}
    results = {(row["instance"], row["arm"], row["summarizer"]): row["result"]
               for row in diagnostics(report)}
    assert results[("one", "pre", "")] == "refused" and results[("two", "pre", "")] == "pass"
    assert results[("two", "post", "m:kimi-code")] == "fail"  # it ran, then was refused
