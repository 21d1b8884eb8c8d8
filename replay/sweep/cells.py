"""A plan's cells with what they need loaded: instances, histories, models and prompts, read
once (`prepare_plan`); each cell's task is made from them (`Prepared.task`) and run by
`replay.pipeline.cell`. And the validation task of an instance, before any of its cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from replay.compaction.sources import PromptText
from replay.compaction.summarize import SummarizerName, parse_summarizer
from replay.core.vocab import Arm
from replay.histories.planned import with_histories
from replay.histories.records import bundled_snapshot
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.judge.timeouts import cell_timeout, gold_seconds
from replay.models.registry import resolve
from replay.models.types import ModelSpec
from replay.pipeline.cell import CellTask, Settings
from replay.pipeline.summary import Summarizer
from replay.records.cell import CellId
from replay.records.history import History
from replay.records.plan import Plan
from replay.records.snapshot import Snapshot
from replay.records.validation import Validation
from replay.store import Store


@dataclass(frozen=True)
class ValidateTask:
    """Protocol step 2 for one instance, before any of its cells: `boundary` is the snapshot
    of its bundled history (restored twice; None: a probe file's), and each test run may take
    `test_timeout` seconds (None: DEFAULT_TEST_TIMEOUT)."""

    instance: Instance
    test_timeout: float | None = None
    boundary: Snapshot | None = None


@dataclass(frozen=True)
class Prepared:
    """A plan with what its cells need loaded: instances, histories, the agent's settings and
    each POST summarizer (its models and prompt)."""

    plan: Plan
    settings: Settings
    instances: dict[str, Instance]
    histories: dict[str, History]
    summarizers: dict[str, Summarizer] = field(default_factory=dict)

    def task(self, cell: CellId, validation: Validation | None = None) -> CellTask:
        """The task of one cell of the plan; its test timeout is the plan's, else derived from
        the instance's `validation`."""
        return CellTask(cell, self.instances[cell.instance_id],
                        self.histories[cell.instance_id],
                        self.summarizers[cell.summarizer] if cell.arm == Arm.POST else None,
                        cell_timeout(self.plan.test_timeout, validation),
                        gold_seconds(validation))

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

    def models(self, cells: list[CellId]) -> list[ModelSpec]:
        """The distinct models that `cells` may call: the agent, the POST summarizers' and
        their evidence judges."""
        specs = {self.settings.agent.alias: self.settings.agent}
        for cell in cells:
            found = self.summarizers.get(cell.summarizer)
            for spec in (found.backbone, found.judge) if found else ():
                if spec is not None:
                    specs.setdefault(spec.alias, spec)
        return list(specs.values())


def prepare_plan(plan: Plan, agent: ModelSpec, load_prompt: Callable[[str], PromptText],
                 store: Store | None = None, known: Sequence[Instance] = ()) -> Prepared:
    """Load what the plan's cells need; bad input (unknown model, prompt, instance) raises.

    The plan's summarizer names are parsed here, once: its tasks carry them parsed.
    `known` are instances the caller has chosen already: they are not loaded again when they
    are all the plan's. Histories are the ones the plan records (bundled, or the store's from
    `replay collect` and `replay import`); `Prepared.plan` records one for each instance
    (`with_histories`).
    """
    by_id = {instance.instance_id: instance for instance in known}
    chosen = ([by_id[ident] for ident in dict.fromkeys(plan.instances)]
              if plan.instances and all(ident in by_id for ident in plan.instances)
              else choose_instances(plan.suite, plan.dataset, plan.instances, None, None))
    summarizers = {text: _summarizer(parse_summarizer(text), plan.temperature, load_prompt)
                   for text in plan.summarizers}
    plan, histories = with_histories(plan, chosen, store)
    return Prepared(plan, Settings(agent, plan.carrier, plan.steps, plan.temperature),
                    {instance.instance_id: instance for instance in chosen}, histories,
                    summarizers)


def _summarizer(name: SummarizerName, temperature: float,
                load_prompt: Callable[[str], PromptText]) -> Summarizer:
    """The summarizer `name` with its backbone and evidence judge resolved and its prompt read."""
    return Summarizer(name, None if name.mechanical else resolve(name.backbone or ""),
                      load_prompt(name.source_prompt) if name.source_prompt else None,
                      resolve(name.fused.judge) if name.fused else None, temperature)
