"""Sweeps: a plan of cells, its dry run, running it as a run kept in the store, and the three-run
confirmation of a run's damaged pairs.

All input is checked against the store read-only first (`Store.peek`); the store is opened to
write (created if need be) only once it is all good, and never by a dry run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from math import comb
from pathlib import Path

from replay.api.listen import SILENT, Listener
from replay.api.prepare import prompt
from replay.api.results import existing_store
from replay.compaction.carriers import CARRIERS
from replay.compaction.sources import PromptText
from replay.compaction.summarize import parse_summarizer, parse_summarizers
from replay.core.errors import InputError
from replay.core.vocab import CellStatus
from replay.histories.boundaries import parse_rule
from replay.histories.planned import choose_histories
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.measures.statistics import power_line
from replay.models.cache import CallCache
from replay.models.keys import api_key
from replay.models.registry import resolve
from replay.models.types import ModelSpec
from replay.pipeline.continuation import model_id
from replay.records.plan import DEFAULT_TEMPERATURE, Plan
from replay.records.validation import Validation
from replay.store import Store
from replay.store.runs import load_cells, save_run
from replay.sweep import execution
from replay.sweep.confirm import confirm_pairs, fixed_samples
from replay.sweep.executors import check_executor, make_executor
from replay.sweep.fit import context_warnings, fitting
from replay.sweep.plan import bind_run, check_timeout, latest_run, pending, require_run
from replay.sweep.run import Run, RunOptions, loaded


@dataclass(frozen=True)
class HistoryChoice:
    """`--history` ids (or prefixes) and `--history-rule` (see `replay.histories.planned`), and
    whether instances whose history does not fit the agent's context are left out (the default
    job: no instance named)."""

    ids: tuple[str, ...] = ()
    rule: str | None = None
    fit: bool = False

    @classmethod
    def parse(cls, ids: list[str] | None, rule: str | None, fit: bool = False) -> HistoryChoice:
        """The choice of these ids and rule text; a malformed rule is bad input."""
        return cls(tuple(ids or ()), parse_rule(rule).text if rule else None, fit and not ids)


NO_CHOICE = HistoryChoice()  # each instance's history as `find_history` picks it


@dataclass(frozen=True)
class SweepEstimate:
    """What a dry run shows: the run's name, its plan, at most how much it calls and costs, and
    the histories that may not fit a model's context."""

    run: str
    plan: Plan
    estimate: execution.Estimate
    power: str
    warnings: tuple[str, ...]

    @property
    def code(self) -> int:
        """Always 0: a dry run runs nothing that could fail."""
        return 0


@dataclass(frozen=True)
class SweepOutcome:
    """What came of running a run's pending cells: the cells, the validations that ended in a
    harness fault and the pending cells of their instances, the budget's line if it stopped."""

    run: str
    plan: Plan
    result: execution.SweepResult
    faults: tuple[Validation, ...]
    waiting: int
    budget_line: str | None

    @property
    def code(self) -> int:
        """0 when no cell and no validation ended in an error (and none was left unstarted)."""
        return 1 if self.result.errors or self.result.unstarted or self.faults else 0


def summarizers(models: Sequence[str], prompt: str, baselines: Sequence[str] = ()) -> list[str]:
    """`MODEL:PROMPT` for each backbone model, then the mechanical `baselines` (anchor_index,
    observation-masking, tail:N), each once; bad input for a name that does not parse."""
    names = [f"{model}:{prompt}" for model in models]
    for name, parsed in parse_summarizers([*baselines, *names]).items():
        if name in baselines and not parsed.mechanical:
            raise InputError(f"--baseline {name!r}: use anchor_index, observation-masking "
                             "or tail:N")
    return list(dict.fromkeys([*names, *baselines]))


def plan(kind: str, summarizers: Sequence[str], agent_model: str, *, suite: str = "demo",
         dataset: str | None = None, ids: Sequence[str] = (), pattern: str | None = None,
         span: str | None = None, carrier: str = "summary-only", steps: int = 8,
         prompt_sources: Path | None = None, temperature: float = DEFAULT_TEMPERATURE,
         test_timeout: float | None = None) -> Plan:
    """A `backbone` or `prompt` sweep's plan: the instances chosen, each summarizer, the fixed
    continuation agent, its carrier, step limit and temperature, the tests' timeout."""
    if carrier not in CARRIERS:
        raise InputError(f"unknown carrier {carrier!r}: use {' or '.join(CARRIERS)}")
    if not summarizers:
        raise InputError("no summarizer: give --model (backbone) or --summarizer (prompt)")
    chosen = choose_instances(suite, dataset, list(ids), pattern, span)
    agent = resolve(agent_model)
    return Plan(kind=kind, suite=suite, dataset=dataset, agent=agent_model,
                agent_id=model_id(agent), carrier=carrier, steps=steps, temperature=temperature,
                prompt_sources=str(prompt_sources.resolve()) if prompt_sources else None,
                instances=tuple(i.instance_id for i in chosen), summarizers=tuple(summarizers),
                test_timeout=test_timeout)


def load(store: Store, name: str, plan: Plan, options: RunOptions, listener: Listener = SILENT,
         known: Sequence[Instance] = ()) -> Run:
    """The run `name` once `plan` joins it (on the options' backend, if they name one), with
    every record its cells need loaded from `store`, once (see `replay.sweep.run`): what a sweep
    runs. Bad input raises (a plan that does not fit the run, an unknown model, prompt or
    instance); nothing is written. `known`: instances the caller has loaded already."""
    merged = bind_run(store, name, plan)
    if options.backend:
        merged = merged.model_copy(update={"backend": options.backend})
    return loaded(store, name, merged, options, resolve(merged.agent),
                  _prompts(merged, options, listener), known)


def estimate(sweep_plan: Plan, options: RunOptions, run: str | None = None,
             histories: HistoryChoice = NO_CHOICE, listener: Listener = SILENT) -> SweepEstimate:
    """A dry run of `sweep`: the run the plan joins and at most what it would call and cost.
    Nothing is called and nothing is written."""
    agent = resolve(sweep_plan.agent)
    with Store.peek(options.store) as seen:
        return _dry_run(seen, _bound(sweep_plan, run, seen, agent, options, histories,
                                     listener))


def sweep(sweep_plan: Plan, options: RunOptions, run: str | None = None,
          histories: HistoryChoice = NO_CHOICE, listener: Listener = SILENT) -> SweepOutcome:
    """Run (or extend, or resume) the run `run` (default: the plan's own name) from the
    `histories` chosen; every pending cell is run and kept, validations first."""
    agent = resolve(sweep_plan.agent)
    _check_keys(sweep_plan, agent)  # a missing key is one line before any download or build
    check_executor(options.executor, options.ray_address)
    with Store.peek(options.store) as seen:
        found = _bound(sweep_plan, run, seen, agent, options, histories, listener)
        todo = _todo(found)
    with Store.open(options.store) as store:
        return _run_pending(store, found, listener, todo)


@dataclass(frozen=True)
class Confirmation:
    """What `confirm` did: the run, its plan with the pairs confirmed, each round's outcome
    (or estimate, for a dry run), and the note on models that sample at temperature 0."""

    run: str
    plan: Plan
    rounds: list[SweepOutcome | SweepEstimate]
    note: str | None

    @property
    def code(self) -> int:
        """The last round's: 0 when no cell ended in an error, else 1."""
        last = self.rounds[-1] if self.rounds else None
        return 0 if last is None else last.code


Round = Callable[[SweepOutcome | SweepEstimate], None]


def confirm(options: RunOptions, run: str | None = None, dry_run: bool = False,
            listener: Listener = SILENT, on_round: Round = lambda _: None) -> Confirmation:
    """Re-run each damaged pair of the run (default: the latest) at seeds 1 and 2; pending
    seed-0 cells are run too, and pairs they turn out damaged are confirmed in a second round
    (`on_round` hears of each once it is done). The run and its models are checked reading the
    store only; a dry run never writes."""
    if not dry_run:
        check_executor(options.executor, options.ray_address)
    with Store.peek(existing_store(options.store)) as seen:
        name = run or latest_run(seen)
        found = require_run(seen, name)
        check_timeout(name, found, options.test_timeout)
        if options.backend:
            found = found.model_copy(update={"backend": options.backend})
        agent = resolve(found.agent)
        if model_id(agent) != found.agent_id:
            raise InputError(f"the agent model {found.agent!r} is now {model_id(agent)}, not "
                             f"{found.agent_id} as when run {name!r} began")
        note = greedy_note(found, agent)
        if dry_run:
            return _confirm(seen, name, found, options, dry_run, listener, on_round, note)
    with Store.open(options.store) as store:
        return _confirm(store, name, found, options, dry_run, listener, on_round, note)


def _confirm(store: Store, name: str, found: Plan, options: RunOptions, dry_run: bool,
             listener: Listener, on_round: Round, note: str | None) -> Confirmation:
    rounds: list[SweepOutcome | SweepEstimate] = []

    def run_plan(current: Plan) -> int:
        run = load(store, name, current, options, listener)
        done = _dry_run(store, run) if dry_run else _run_pending(store, run, listener,
                                                                  _todo(run))
        rounds.append(done)
        on_round(done)
        return done.code

    confirmed, _ = confirm_pairs(store, name, found, dry_run, run_plan, listener.note, note)
    return Confirmation(name, confirmed, rounds, note)


def greedy_note(found: Plan, agent: ModelSpec) -> str | None:
    """What confirm says when the agent or a summarizer backbone samples at temperature 0."""
    backbones = {parse_summarizer(s).backbone for s in found.summarizers} - {None}
    fixed = fixed_samples(found, [agent, *(resolve(name) for name in sorted(backbones))])
    if not fixed:
        return None
    return (f"note: {', '.join(fixed)} sample(s) at temperature 0 (the run's temperature is "
            f"{found.temperature:g}; a model's own `temperature` setting wins): a deterministic "
            "server answers seeds 1 and 2 as it answered seed 0 (a seed changes nothing without "
            "sampling), so these confirmation samples cannot differ and damage can only look "
            "stable")


def _prompts(found: Plan, options: RunOptions,
             listener: Listener) -> Callable[[str], PromptText]:
    """Where prompts come from: the options' own, else the plan's catalogue (the bundled one
    unless it names another)."""
    if options.prompts is not None:
        return options.prompts
    sources = Path(found.prompt_sources) if found.prompt_sources else None
    return lambda name: prompt(name, sources, listener)


def _check_keys(plan: Plan, agent: ModelSpec) -> None:
    """Every key the plan's models need is set: the agent's, the summarizers' backbones' and
    the evidence judges' of fused summarizers."""
    api_key(agent)
    for summarizer in plan.summarizers:
        name = parse_summarizer(summarizer)
        models = [name.backbone, *((name.fused.base.backbone, name.fused.judge)
                                   if name.fused else ())]
        for model in filter(None, models):
            api_key(resolve(model))


def _bound(plan: Plan, run: str | None, store: Store, agent: ModelSpec, options: RunOptions,
           histories: HistoryChoice, listener: Listener) -> Run:
    """The run the plan joins (named `run`, else the plan's default name), from the histories
    chosen, loaded; bad input raises, nothing is written."""
    instances = choose_instances(plan.suite, plan.dataset, plan.instances, None, None)
    if histories.fit:
        instances = fitting(instances, store, histories.rule, agent, listener.note)
        plan = plan.model_copy(update={"instances": tuple(i.instance_id for i in instances)})
    plan = plan.model_copy(update={"histories": choose_histories(
        instances, store, histories.ids, histories.rule)})
    return load(store, run or plan.default_name(), plan, options, listener, instances)


def _todo(run: Run) -> int:
    """How many cells of the run are pending, once every model they call has its key."""
    todo = run.pending()
    for spec in run.models(todo):
        api_key(spec)
    return len(todo)


def _dry_run(store: Store, run: Run) -> SweepEstimate:
    """The estimate of running the run's pending cells; nothing is called or written."""
    plan = run.plan
    return SweepEstimate(run.name, plan, execution.estimate(run, store),
                         power_line(len(plan.instances), comb(len(plan.summarizers), 2)),
                         tuple(context_warnings(run)))


def _run_pending(store: Store, run: Run, listener: Listener, todo: int) -> SweepOutcome:
    """Record the run's plan and run its `todo` pending cells (`_todo`)."""
    save_run(store, run.name, run.plan)
    options = run.options
    executor = make_executor(run)
    try:
        with CallCache(store.path) as cache, listener.cells(todo, options.workers) as progress:
            run, validated = execution.validate(run, store, cache, executor, progress)
            result = replace(execution.execute(run, store, cache, executor, progress),
                             validated=validated)
    finally:
        executor.close()
    faults = tuple(found for found in result.validated if found.status == CellStatus.ERROR)
    failed = {found.instance_id for found in faults}
    waiting = sum(1 for cell in pending(run.plan, load_cells(store, run.name))
                  if cell.instance_id in failed) if faults else 0
    budget_line = (options.spending.line(len(result.unstarted))
                   if result.unstarted and options.spending is not None else None)
    return SweepOutcome(run.name, run.plan, result, faults, waiting, budget_line)
