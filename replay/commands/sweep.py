"""`replay backbone`, `replay prompt`, `replay confirm` and `replay report`: sweeps and reports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import comb
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay.commands.options import (
    BaseImage,
    CallDeadline,
    Dataset,
    HistoryIds,
    HistoryRule,
    Ids,
    Mirrors,
    Pattern,
    Span,
    StorePath,
    Suite,
    TestTimeout,
    console,
    run_name,
    say,
)
from replay.commands.prompts import ensure_prompt
from replay.commands.sweep_choices import (
    DEFAULT_MODEL,
    NO_CHOICE,
    Backbones,
    DefaultAgent,
    HistoryChoice,
)
from replay.compaction import agents
from replay.compaction.carriers import CARRIERS
from replay.compaction.sources import PromptText
from replay.compaction.summarize import parse_summarizer
from replay.core.errors import InputError
from replay.core.paths import default_store
from replay.instances.selection import choose_instances
from replay.measures.statistics import power_line
from replay.models.cache import CallCache
from replay.models.keys import api_key
from replay.models.registry import resolve
from replay.models.types import ModelSpec
from replay.records.plan import DEFAULT_TEMPERATURE, Plan
from replay.report.tables import build, render
from replay.store import Store
from replay.sweep.budget import Budget
from replay.sweep.cells import Prepared, prepare
from replay.sweep.continuation import model_id
from replay.sweep.execution import estimate, execute, finished_line
from replay.sweep.executors import check_executor, make_executor
from replay.sweep.fit import context_warnings, fitting
from replay.sweep.histories import choose_histories
from replay.sweep.plan import (
    bind_run,
    load_cells,
    pending,
    save_run,
    timeout_text,
)
from replay.sweep.progress import SweepProgress
from replay.sweep.workers import Setup


@dataclass(frozen=True)
class Execution:
    """How to run a plan: where, with how many workers, and whether to only show it."""

    store: Path
    workers: int = 1
    per_provider: int = 8
    backend: str | None = None
    executor: str = "local"
    ray_address: str | None = None
    mirrors: Path | None = None
    dry_run: bool = False
    quiet: bool = False
    base_image: str | None = None
    call_deadline: float | None = None
    test_timeout: float | None = None  # `replay confirm`'s: checked against the run's
    budget: Budget | None = None  # one for the command's life (confirm runs in rounds)


def prompt_loader(plan: Plan) -> Callable[[str], PromptText]:
    """Load prompts from the plan's catalogue (the bundled one unless it names another)."""
    sources = Path(plan.prompt_sources) if plan.prompt_sources else None
    return lambda name: ensure_prompt(name, sources, console)


def sweep_command(plan: Plan, run: str | None, how: Execution, out: Console,
                  histories: HistoryChoice = NO_CHOICE) -> int:
    """Run (or extend, or resume) a sweep from the `histories` chosen; 0 when every cell and
    every validation ended without an error, else 1.

    All input is checked against the store read-only first (`Store.peek`); the store is opened
    to write (created if need be) only once it is all good, and never by a dry run."""
    agent = resolve(plan.agent)
    if not how.dry_run:  # a missing key is one line before any download or build
        _check_keys(plan, agent)
        check_executor(how.executor, how.ray_address)
    with Store.peek(how.store) as seen:
        instances = choose_instances(plan.suite, plan.dataset, plan.instances, None, None)
        if histories.fit:
            instances = fitting(instances, seen, histories.rule, agent, lambda s: say(out, s))
            plan = plan.model_copy(update={"instances": tuple(i.instance_id for i in instances)})
        plan = plan.model_copy(update={"histories": choose_histories(
            instances, seen, histories.ids, histories.rule)})
        name = run or plan.default_name()
        merged = bind_run(seen, name, plan)
        if how.backend:
            merged = merged.model_copy(update={"backend": how.backend})
        prepared = prepare(merged, agent, prompt_loader(merged), seen)
        if how.dry_run:
            print_estimate(seen, name, prepared, out)
            return 0
        todo = checked_todo(seen, name, prepared)
    with Store.open(how.store) as store:
        return execute_plan(store, name, prepared, how, out, todo, show=True)


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


def checked_todo(store: Store, name: str, prepared: Prepared) -> int:
    """How many cells of the run are pending, once every model they call has its key."""
    todo = pending(prepared.plan, load_cells(store, name))
    for spec in prepared.models(todo):
        api_key(spec)
    return len(todo)


def execute_plan(store: Store, name: str, prepared: Prepared, how: Execution, out: Console,
                 todo: int, show: bool) -> int:
    """Record the run's plan, run its `todo` pending cells and say what came of them (with
    `show`, the grid too); 0 when no cell and no validation ended in an error, else 1."""
    plan = prepared.plan
    save_run(store, name, plan)
    setup = Setup(prepared.settings, plan.backend, how.mirrors, store.path, how.per_provider,
                  how.base_image, how.call_deadline)
    executor = make_executor(how.executor, setup, how.workers, how.ray_address, how.budget)
    try:
        with CallCache(store.path) as cache, \
                SweepProgress(out, todo, quiet=how.quiet, workers=how.workers) as progress:
            result = execute(prepared, name, store, cache, executor, progress, how.budget)
    finally:
        executor.close()
    faults = [found for found in result.validated if found.status == "error"]
    say(out, finished_line(name, result, len(plan.cells()), len(faults)))
    if faults:
        waiting = sum(1 for cell in pending(plan, load_cells(store, name))
                      if cell.instance_id in {found.instance_id for found in faults})
        say(out, f"  {len(faults)} validation(s) ended in a harness fault, so their "
                 f"{waiting} cell(s) did not run (run the command again to retry them):")
    for found in faults[:5]:
        reason = (found.reasons or ["no reason recorded"])[0].strip().splitlines()[0]
        say(out, f"  error validating {found.instance_id}: {reason}")
    for failed in result.errors[:5]:
        say(out, f"  error {failed.cell}: {failed.error}")
    if result.unstarted and how.budget is not None:
        say(out, how.budget.line(len(result.unstarted)))
    if show:
        render(build(store, name), out)
        say(out, f"`replay report {name}` writes the exports", style="dim")
    return 1 if result.errors or result.unstarted or faults else 0


def print_estimate(store: Store, name: str, prepared: Prepared, out: Console) -> None:
    """What a dry run shows: the plan, its cells and at most how many calls, tokens, dollars."""
    plan = prepared.plan
    found = estimate(prepared, name, store)
    unpriced = f" (no price for {', '.join(found.unpriced)})" if found.unpriced else ""
    for line in (
        f"plan of run {name} ({plan.kind} sweep, dry run: nothing is called)",
        f"  instances   {len(plan.instances)}: {', '.join(plan.instances)}",
        f"  summarizers {len(plan.summarizers)}: {', '.join(plan.summarizers)}",
        f"  histories   {', '.join(f'{h.instance_id} {h.id[:12]}' for h in plan.histories)}",
        f"  agent {plan.agent}, carrier {plan.carrier}, {plan.steps} steps, temperature "
        f"{plan.temperature:g}, backend {plan.backend}",
        f"  test timeout {timeout_text(plan.test_timeout)}",
        f"  cells {found.cells}: {found.done} done, {found.kept} kept in the store, "
        f"{found.to_run} to run",
        f"  model calls at most {found.summary_calls + found.agent_calls} "
        f"({found.summary_calls} summaries, {found.agent_calls} agent steps)",
        f"  tokens at most {found.input_tokens:,} in, {found.output_tokens:,} out; "
        f"cost at most ${found.cost:.2f}{unpriced}",
        "  " + power_line(len(plan.instances), comb(len(plan.summarizers), 2)),
    ):
        say(out, line)
    for line in context_warnings(prepared):
        say(out, line, style="yellow")


def _summarizers(models: list[str], prompt: str, baselines: list[str]) -> list[str]:
    names = [f"{model}:{prompt}" for model in models]
    for baseline in baselines:
        if not parse_summarizer(baseline).mechanical:
            raise InputError(f"--baseline {baseline!r}: use anchor_index, observation-masking "
                             "or tail:N")
        names.append(baseline)
    for name in names:
        parse_summarizer(name)
    return list(dict.fromkeys(names))


def _plan(kind: str, summarizers: list[str], suite: str, dataset: str | None,
          ids: list[str] | None, pattern: str | None, span: str | None, agent_model: str,
          carrier: str, steps: int, prompt_sources: Path | None, temperature: float,
          test_timeout: float | None = None) -> Plan:
    if carrier not in CARRIERS:
        raise InputError(f"unknown carrier {carrier!r}: use {' or '.join(CARRIERS)}")
    if not summarizers:
        raise InputError("no summarizer: give --model (backbone) or --summarizer (prompt)")
    chosen = choose_instances(suite, dataset, ids or [], pattern, span)
    agent = resolve(agent_model)
    return Plan(kind=kind, suite=suite, dataset=dataset, agent=agent_model,
                agent_id=model_id(agent), carrier=carrier, steps=steps, temperature=temperature,
                prompt_sources=str(prompt_sources.resolve()) if prompt_sources else None,
                instances=tuple(i.instance_id for i in chosen), summarizers=tuple(summarizers),
                test_timeout=test_timeout)


AgentModel = Annotated[str, typer.Option(
    help="The continuation agent: an alias or PROVIDER:MODEL[@URL][#KEY_ENV].")]
Carrier = Annotated[str, typer.Option(help="summary-only or native.")]
Steps = Annotated[int, typer.Option(min=1, help="Step limit of every continuation.")]
Temperature = Annotated[float, typer.Option(
    min=0, help="What the agent and the summarizers sample at, for the run's life (a model's own "
                "temperature setting wins); the sample index goes out as the seed.")]
Workers = Annotated[int, typer.Option(min=1, help="Cells run at once.")]
PerProvider = Annotated[int, typer.Option(
    min=1, help="Model calls in flight at once on one provider endpoint.")]
Backend = Annotated[str | None, typer.Option(help="Environment backend (default local).")]
Executor = Annotated[str, typer.Option(help="local (threads) or ray.")]
RayAddress = Annotated[str | None, typer.Option(help="Ray cluster address (default: local).")]
RunName = Annotated[str | None, typer.Option(
    "--run", callback=run_name,
    help="Run name: resume or extend it (default: derived from the plan).")]
DryRun = Annotated[bool, typer.Option(help="Show the plan, calls, tokens and cost; run nothing.")]
Baselines = Annotated[list[str] | None, typer.Option(
    "--baseline", help="Mechanical summarizer to add: anchor_index, observation-masking, tail:N.")]
PromptSources = Annotated[Path | None, typer.Option(
    help="A prompt catalogue to use instead of the bundled prompts/sources.toml.")]
ALL_PROMPTS = ",".join(agents.BUILTIN)
Prompts = Annotated[str, typer.Option(help="Prompts to compare, comma-separated.")]
Dollars = Annotated[float | None, typer.Option(
    "--budget", min=0, help="Start no cell once spend so far plus the cells in flight would pass "
                            "this many dollars (exit 1; the cells done are kept).")]


def register(app: typer.Typer) -> None:
    """Add `replay backbone` and `prompt` to the command line."""

    @app.command()
    def backbone(
        agent_model: DefaultAgent = DEFAULT_MODEL,
        model: Backbones = None,
        prompt: Annotated[str, typer.Option(help="The fixed compaction prompt.")] = "claude-code",
        baseline: Baselines = None, suite: Suite = "demo", dataset: Dataset = None,
        instance: Ids = None, filter_: Pattern = None, slice_: Span = None,
        carrier: Carrier = "summary-only", steps: Steps = 8,
        temperature: Temperature = DEFAULT_TEMPERATURE, workers: Workers = 1,
        per_provider: PerProvider = 8, backend: Backend = None, executor: Executor = "local",
        ray_address: RayAddress = None, run: RunName = None, dry_run: DryRun = False,
        store: StorePath = None, repo_mirror: Mirrors = None, base_image: BaseImage = None,
        prompt_sources: PromptSources = None, call_deadline: CallDeadline = None,
        history: HistoryIds = None, history_rule: HistoryRule = None, budget: Dollars = None,
        test_timeout: TestTimeout = None,
    ) -> None:
        """Compare summarizer backbones with the prompt, agent, histories and snapshots fixed."""
        plan = _plan("backbone", _summarizers(model or [DEFAULT_MODEL], prompt, baseline or []),
                     suite, dataset,
                     instance, filter_, slice_, agent_model, carrier, steps, prompt_sources,
                     temperature, test_timeout)
        how = Execution(store or default_store(), workers, per_provider, backend, executor,
                        ray_address, repo_mirror, dry_run, base_image=base_image,
                        call_deadline=call_deadline, budget=Budget.of(budget))
        fit = HistoryChoice.parse(history, history_rule, not (instance or filter_ or slice_))
        raise typer.Exit(sweep_command(plan, run, how, console, fit))

    @app.command("prompt")
    def prompt_sweep(
        agent_model: AgentModel,
        summarizer: Annotated[str, typer.Option(
            help="The fixed summarizer model: an alias or ad-hoc spec.")],
        prompts: Prompts = ALL_PROMPTS,
        baseline: Baselines = None, suite: Suite = "demo", dataset: Dataset = None,
        instance: Ids = None, filter_: Pattern = None, slice_: Span = None,
        carrier: Carrier = "summary-only", steps: Steps = 8,
        temperature: Temperature = DEFAULT_TEMPERATURE, workers: Workers = 1,
        per_provider: PerProvider = 8, backend: Backend = None, executor: Executor = "local",
        ray_address: RayAddress = None, run: RunName = None, dry_run: DryRun = False,
        store: StorePath = None, repo_mirror: Mirrors = None, base_image: BaseImage = None,
        prompt_sources: PromptSources = None, call_deadline: CallDeadline = None,
        history: HistoryIds = None, history_rule: HistoryRule = None, budget: Dollars = None,
        test_timeout: TestTimeout = None,
    ) -> None:
        """Compare compaction prompts with the summarizer model fixed."""
        names = [name.strip() for name in prompts.split(",") if name.strip()]
        summarizers = [s for name in names for s in _summarizers([summarizer], name, [])]
        summarizers += _summarizers([], "", baseline or [])
        plan = _plan("prompt", summarizers, suite, dataset, instance, filter_, slice_,
                     agent_model, carrier, steps, prompt_sources, temperature, test_timeout)
        how = Execution(store or default_store(), workers, per_provider, backend, executor,
                        ray_address, repo_mirror, dry_run, base_image=base_image,
                        call_deadline=call_deadline, budget=Budget.of(budget))
        raise typer.Exit(sweep_command(plan, run, how, console,
                                       HistoryChoice.parse(history, history_rule)))
