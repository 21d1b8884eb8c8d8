"""A run as a sweep is given it: what is measured (`Plan`, stored), how it runs (`RunOptions`,
never stored) and the records its cells need, loaded once (`Run`).

`loaded` reads them all before anything runs: the instances, each one's history, the parsed
summarizers (their models resolved and prompts read), the agent's settings, the verdict on each
instance and the cells the store keeps. Every cell's task is made from them (`Run.task`), and
every instance's validation (`Run.validation`); the driver (`replay.sweep.execution`) and the
workers (`replay.sweep.workers`, here or on Ray) get the same `Run`. A `Run` never changes:
verdicts made while it runs give a new one (`Run.judged`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from replay.compaction.sources import PromptText
from replay.compaction.summarize import SummarizerName, parse_summarizer
from replay.core.vocab import Arm, CellStatus, ValidationStatus
from replay.histories.planned import with_histories
from replay.histories.records import bundled_snapshot
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.judge.timeouts import cell_timeout, gold_seconds
from replay.models.registry import resolve
from replay.models.types import ModelSpec
from replay.pipeline.cell import CellTask, Settings, kept_result
from replay.pipeline.summary import Summarizer
from replay.records.cell import CellId, CellResult
from replay.records.history import History
from replay.records.plan import Plan
from replay.records.snapshot import Snapshot
from replay.records.validation import Validation
from replay.store import Store
from replay.store.runs import load_cells
from replay.sweep.budget import Budget
from replay.sweep.labels import validations
from replay.sweep.plan import pending


@dataclass(frozen=True)
class RunOptions:
    """How a run's cells run, never stored: the store, the workers (`executor` "local" or
    "ray" at `ray_address`; `per_provider` model calls in flight per endpoint), the backend
    (None: the plan's), where environments and models are, the limits. `test_timeout` is
    `replay confirm`'s (checked against the run's). `budget` is dollars: no cell starts once
    spend so far plus the cells in flight would pass it; one budget (`spending`) holds for
    every sweep run with these options (confirm runs in rounds). `prompts` gives a compaction
    prompt by name (default: from the plan's catalogue, synced when missing).

    A worker on another machine gets the options without `prompts` and `spending`: the prompts
    are read and the budget is kept by the driver."""

    store: Path
    workers: int = 1
    per_provider: int = 8
    backend: str | None = None
    executor: str = "local"
    ray_address: str | None = None
    mirrors: Path | None = None
    base_image: str | None = None
    call_deadline: float | None = None
    test_timeout: float | None = None
    budget: float | None = None
    prompts: Callable[[str], PromptText] | None = None
    spending: Budget | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spending", Budget.of(self.budget))

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "prompts": None, "spending": None}


@dataclass(frozen=True)
class ValidateTask:
    """Protocol step 2 for one instance, before any of its cells: `boundary` is the snapshot
    of its bundled history (restored twice; None: a probe file's), and each test run may take
    `test_timeout` seconds (None: DEFAULT_TEST_TIMEOUT)."""

    instance: Instance
    test_timeout: float | None = None
    boundary: Snapshot | None = None


@dataclass(frozen=True)
class Run:
    """A run with what its cells need loaded (see the module docstring): `settings` are what
    every cell shares (the agent's model, carrier, steps, temperature), `summarizers` each POST
    summarizer parsed, `verdicts` the stored verdict on each instance of the plan on its
    backend, `cells` the results the store keeps, `todo` the cells to run: the pending ones,
    and the refused ones whose refusal the store no longer holds for the request the plan
    would send now (a model's settings changed since)."""

    name: str
    plan: Plan
    options: RunOptions
    settings: Settings
    instances: Mapping[str, Instance]
    histories: Mapping[str, History]
    summarizers: Mapping[str, Summarizer]
    verdicts: Mapping[str, Validation | None]
    cells: Mapping[CellId, CellResult]
    todo: tuple[CellId, ...] = ()

    def task(self, cell: CellId) -> CellTask:
        """The task of one cell of the plan; its test timeout is the plan's, else derived from
        the instance's verdict."""
        verdict = self.verdicts.get(cell.instance_id)
        return CellTask(cell, self.instances[cell.instance_id],
                        self.histories[cell.instance_id],
                        self.summarizers[cell.summarizer] if cell.arm == Arm.POST else None,
                        cell_timeout(self.plan.test_timeout, verdict), gold_seconds(verdict))

    def tasks(self, cells: Sequence[CellId]) -> list[CellTask]:
        """The tasks of `cells`, in their order."""
        return [self.task(cell) for cell in cells]

    def validation(self, instance_id: str) -> ValidateTask:
        """The validation task of one instance of the plan (its bundled history's snapshot
        as read for the plan when the plan continues from it)."""
        instance = self.instances[instance_id]
        if any(found.instance_id == instance_id and found.bundled
               for found in self.plan.histories):
            boundary = self.histories[instance_id].snapshot
        else:
            boundary = bundled_snapshot(instance)
        return ValidateTask(instance, self.plan.test_timeout, boundary)

    def pending(self) -> list[CellId]:
        """The plan's cells without a `done` result, in plan order."""
        return pending(self.plan, self.cells)

    def unjudged(self, cells: Sequence[CellId]) -> list[ValidateTask]:
        """The validation tasks of the instances of `cells` with no verdict, or whose last
        one was a harness fault."""
        instances = dict.fromkeys(cell.instance_id for cell in cells)
        return [self.validation(ident) for ident in instances
                if (found := self.verdicts.get(ident)) is None
                or found.status == ValidationStatus.ERROR]

    def judged(self, verdicts: Mapping[str, Validation | None]) -> Run:
        """This run with `verdicts` in place of the ones it had for their instances."""
        return replace(self, verdicts={**self.verdicts, **verdicts})

    def valid(self, cells: Sequence[CellId]) -> list[CellId]:
        """Those of `cells` whose instance validation found valid."""
        return [cell for cell in cells if (found := self.verdicts.get(cell.instance_id))
                is not None and found.status == ValidationStatus.VALID]

    def models(self, cells: Sequence[CellId]) -> list[ModelSpec]:
        """The distinct models that `cells` may call: the agent, the POST summarizers' and
        their evidence judges."""
        specs = {self.settings.agent.alias: self.settings.agent}
        for cell in cells:
            found = self.summarizers.get(cell.summarizer)
            for spec in (found.backbone, found.judge) if found else ():
                if spec is not None:
                    specs.setdefault(spec.alias, spec)
        return list(specs.values())


def loaded(store: Store, name: str, plan: Plan, options: RunOptions, agent: ModelSpec,
           prompts: Callable[[str], PromptText], known: Sequence[Instance] = ()) -> Run:
    """The run `name` of `plan` with its records loaded; bad input (unknown model, prompt,
    instance) raises.

    `known` are instances the caller has chosen already: they are not loaded again when they
    are all the plan's. Histories are the ones the plan records (bundled, or the store's from
    `replay collect` and `replay import`); `Run.plan` records one for each instance
    (`with_histories`).
    """
    by_id = {instance.instance_id: instance for instance in known}
    chosen = ([by_id[ident] for ident in dict.fromkeys(plan.instances)]
              if plan.instances and all(ident in by_id for ident in plan.instances)
              else choose_instances(plan.suite, plan.dataset, plan.instances, None, None))
    summarizers = {text: _summarizer(parse_summarizer(text), plan.temperature, prompts)
                   for text in plan.summarizers}
    plan, histories = with_histories(plan, chosen, store)
    run = Run(name, plan, options, Settings(agent, plan.carrier, plan.steps, plan.temperature),
              {instance.instance_id: instance for instance in chosen}, histories, summarizers,
              validations(store, plan), load_cells(store, name))
    return replace(run, todo=(*run.pending(), *_stale_refusals(run, store)))


def _stale_refusals(run: Run, store: Store) -> list[CellId]:
    """Refused cells whose refusal the store no longer holds for the request the plan would
    send now: they run again."""
    return [cell for cell in run.plan.cells()
            if (found := run.cells.get(cell)) is not None and found.status == CellStatus.DONE
            and found.refused and kept_result(run.task(cell), run.settings, store) is None]


def _summarizer(name: SummarizerName, temperature: float,
                prompts: Callable[[str], PromptText]) -> Summarizer:
    """The summarizer `name` with its backbone and evidence judge resolved and its prompt read."""
    return Summarizer(name, None if name.mechanical else resolve(name.backbone or ""),
                      prompts(name.source_prompt) if name.source_prompt else None,
                      resolve(name.fused.judge) if name.fused else None, temperature)
