"""A run is loaded once (`api.load`): the plan as its stored run has it, with every record its
cells need; tasks and validations come from it, verdicts give a new run, and what a Ray actor
is sent of it pickles without the driver's prompts and budget."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from replay import api
from replay.compaction.sources import PromptText
from replay.core.errors import InputError
from replay.core.vocab import Arm, CellStatus, SweepKind, ValidationStatus
from replay.models.registry import resolve
from replay.pipeline.continuation import model_id
from replay.records.cell import CellId, CellResult
from replay.records.plan import Plan
from replay.records.validation import Validation
from replay.store import Store
from replay.store.runs import keep_cell, save_run

from sweep_scripts import STOCKROOM, TALLY

AGENT = "openai:agent@http://127.0.0.1:9/v1"
SUMMARIZER = "openai:summ@http://127.0.0.1:9/v1:claude-code"
PROMPT = PromptText(name="claude-code", agent="claude-code", registry="npm", package="fixture",
                    version="0", digest="sha512-fixture", parts={"user": "Summarize."},
                    synced_at="2026-01-01T00:00:00Z")


def plan(instances: tuple[str, ...] = (STOCKROOM, TALLY), steps: int = 8) -> Plan:
    return Plan(kind=SweepKind.BACKBONE, agent=AGENT, agent_id=model_id(resolve(AGENT)),
                steps=steps, instances=instances, summarizers=(SUMMARIZER, "anchor_index"))


def options(tmp_path: Path, backend: str | None = None, workers: int = 1,
            budget: float | None = None) -> api.RunOptions:
    return api.RunOptions(tmp_path / "replay.db", workers=workers, backend=backend,
                          budget=budget, prompts=lambda name: PROMPT)


def test_a_run_is_loaded_once_with_what_its_cells_need(tmp_path: Path) -> None:
    with Store.open(tmp_path / "replay.db") as store:
        run = api.load(store, "r", plan(), options(tmp_path))
    assert run.name == "r" and set(run.instances) == set(run.histories) == {STOCKROOM, TALLY}
    assert [found.instance_id for found in run.plan.histories] == [STOCKROOM, TALLY]
    assert run.settings.agent.alias == resolve(AGENT).alias and run.settings.steps == 8
    parsed = run.summarizers[SUMMARIZER]
    assert parsed.prompt == PROMPT and parsed.backbone is not None
    assert run.summarizers["anchor_index"].backbone is None
    assert run.verdicts == {STOCKROOM: None, TALLY: None} and run.cells == {}
    assert run.todo == tuple(run.plan.cells()) and len(run.todo) == 2 * (1 + 2)
    post = run.task(CellId(TALLY, Arm.POST, SUMMARIZER, 0))
    assert post.summarizer is parsed and post.history is run.histories[TALLY]
    assert run.task(CellId(TALLY, Arm.PRE, "", 0)).summarizer is None
    assert run.validation(TALLY).instance is run.instances[TALLY]
    assert {spec.alias for spec in run.models(list(run.todo))} == {
        run.settings.agent.alias, parsed.backbone.alias}


def test_the_run_has_the_stored_cells_and_verdicts(tmp_path: Path) -> None:
    done = CellId(STOCKROOM, Arm.PRE, "", 0)
    with Store.open(tmp_path / "replay.db") as store:
        save_run(store, "r", plan())
        keep_cell(store, "r", CellResult(done, CellStatus.DONE, passed=True))
        run = api.load(store, "r", plan(instances=(TALLY,)), options(tmp_path, backend="docker"))
    assert run.plan.instances == (STOCKROOM, TALLY)  # the stored run, extended
    assert run.plan.backend == "docker"
    assert set(run.cells) == {done} and done not in run.todo
    assert run.pending() == list(run.todo)


def test_verdicts_give_a_new_run(tmp_path: Path) -> None:
    with Store.open(tmp_path / "replay.db") as store:
        run = api.load(store, "r", plan(), options(tmp_path))
    cells = list(run.todo)
    assert [task.instance.instance_id for task in run.unjudged(cells)] == [STOCKROOM, TALLY]
    judged = run.judged({STOCKROOM: Validation(STOCKROOM, ValidationStatus.VALID),
                         TALLY: Validation(TALLY, ValidationStatus.EXCLUDED, ["no tests"])})
    assert run.verdicts == {STOCKROOM: None, TALLY: None}  # unchanged
    assert judged.valid(cells) == [cell for cell in cells if cell.instance_id == STOCKROOM]
    assert judged.unjudged(cells) == []
    faulted = judged.judged({TALLY: Validation(TALLY, ValidationStatus.ERROR, ["harness"])})
    assert [task.instance.instance_id for task in faulted.unjudged(cells)] == [TALLY]


def test_a_plan_of_another_frame_is_bad_input(tmp_path: Path) -> None:
    with Store.open(tmp_path / "replay.db") as store:
        save_run(store, "r", plan())
        with pytest.raises(InputError, match="different plan"):
            api.load(store, "r", plan(steps=3), options(tmp_path))


def test_what_a_ray_actor_gets_pickles_without_prompts_and_budget(tmp_path: Path) -> None:
    with Store.open(tmp_path / "replay.db") as store:
        run = api.load(store, "r", plan(), options(tmp_path, budget=2.0, workers=3))
    assert run.options.spending is not None and run.options.prompts is not None
    sent = pickle.loads(pickle.dumps(run))
    assert sent.options.prompts is None and sent.options.spending is None
    assert sent.options.workers == 3 and sent.options.budget == 2.0
    assert sent.plan == run.plan and sent.task(run.todo[-1]) == run.task(run.todo[-1])
