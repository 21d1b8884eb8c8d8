"""`replay backbone`, `replay prompt`, `replay confirm` and `replay report`: sweeps and reports."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay import api
from replay.commands.inputs import PathKind, path_option
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
    printed,
    run_name,
    say,
)
from replay.commands.sweep_choices import DEFAULT_MODEL, Backbones, DefaultAgent
from replay.compaction import agents
from replay.core.limits import MAX_DOLLARS, MAX_STEPS, MAX_TEMPERATURE, MAX_WORKERS
from replay.core.paths import default_store
from replay.records.plan import DEFAULT_TEMPERATURE, Plan
from replay.report.tables import render
from replay.sweep.execution import finished_line
from replay.sweep.plan import timeout_text


def show_outcome(outcome: api.SweepOutcome, store: Path, out: Console, grid: bool) -> None:
    """What came of running a run's cells: the finished line, validation faults, errors, the
    budget's line and (with `grid`) the outcome grid."""
    name, result = outcome.run, outcome.result
    say(out, finished_line(name, result, len(outcome.plan.cells()), len(outcome.faults)))
    if outcome.faults:
        say(out, f"  {len(outcome.faults)} validation(s) ended in a harness fault, so their "
                 f"{outcome.waiting} cell(s) did not run (run the command again to retry "
                 "them):")
    for found in outcome.faults[:5]:
        reason = (found.reasons or ["no reason recorded"])[0].strip().splitlines()[0]
        say(out, f"  error validating {found.instance_id}: {reason}")
    for failed in result.errors[:5]:
        say(out, f"  error {failed.cell}: {failed.fault and failed.fault.text()}")
    if outcome.budget_line is not None:
        say(out, outcome.budget_line)
    if grid:
        render(api.report(store, name), out)
        say(out, f"`replay report {name}` writes the exports", style="dim")


def show_estimate(found: api.SweepEstimate, out: Console) -> None:
    """What a dry run shows: the plan, its cells and at most how many calls, tokens, dollars."""
    plan, cells = found.plan, found.estimate
    unpriced = f" (no price for {', '.join(cells.unpriced)})" if cells.unpriced else ""
    for line in (
        f"plan of run {found.run} ({plan.kind} sweep, dry run: nothing is called)",
        f"  instances   {len(plan.instances)}: {', '.join(plan.instances)}",
        f"  summarizers {len(plan.summarizers)}: {', '.join(plan.summarizers)}",
        f"  histories   {', '.join(f'{h.instance_id} {h.id[:12]}' for h in plan.histories)}",
        f"  agent {plan.agent}, carrier {plan.carrier}, {plan.steps} steps, temperature "
        f"{plan.temperature:g}, backend {plan.backend}",
        f"  test timeout {timeout_text(plan.test_timeout)}",
        f"  cells {cells.cells}: {cells.done} done, {cells.kept} kept in the store, "
        f"{cells.to_run} to run",
        f"  model calls at most {cells.summary_calls + cells.agent_calls} "
        f"({cells.summary_calls} summaries, {cells.agent_calls} agent steps)",
        f"  tokens at most {cells.input_tokens:,} in, {cells.output_tokens:,} out; "
        f"cost at most ${cells.cost:.2f}{unpriced}",
        "  " + found.power,
    ):
        say(out, line)
    for line in found.warnings:
        say(out, line, style="yellow")


def sweep_command(plan: Plan, run: str | None, options: api.RunOptions, dry_run: bool,
                  histories: api.HistoryChoice = api.NO_CHOICE) -> int:
    """Run (or only show, `dry_run`) the sweep and print what came of it; 0 when every cell and
    every validation ended without an error, else 1."""
    if dry_run:
        show_estimate(api.estimate(plan, options, run, histories, printed), console)
        return 0
    outcome = api.sweep(plan, options, run, histories, printed)
    show_outcome(outcome, options.store, console, grid=True)
    return outcome.code


AgentModel = Annotated[str, typer.Option(
    help="The continuation agent: an alias or PROVIDER:MODEL[@URL][#KEY_ENV].")]
Carrier = Annotated[str, typer.Option(help="summary-only or native.")]
Steps = Annotated[int, typer.Option(
    min=1, max=MAX_STEPS, help="Step limit of every continuation.")]
Temperature = Annotated[float, typer.Option(
    min=0, max=MAX_TEMPERATURE,
    help="What the agent and the summarizers sample at, for the run's life (a model's own "
                "temperature setting wins); the sample index goes out as the seed.")]
Workers = Annotated[int, typer.Option(min=1, max=MAX_WORKERS, help="Cells run at once.")]
PerProvider = Annotated[int, typer.Option(
    min=1, max=MAX_WORKERS, help="Model calls in flight at once on one provider endpoint.")]
Backend = Annotated[str | None, typer.Option(help="Environment backend (default local).")]
Executor = Annotated[str, typer.Option(help="local (threads) or ray.")]
RayAddress = Annotated[str | None, typer.Option(help="Ray cluster address (default: local).")]
RunName = Annotated[str | None, typer.Option(
    "--run", callback=run_name,
    help="Run name: resume or extend it (default: derived from the plan).")]
DryRun = Annotated[bool, typer.Option(help="Show the plan, calls, tokens and cost; run nothing.")]
Baselines = Annotated[list[str] | None, typer.Option(
    "--baseline", help="Mechanical summarizer to add: anchor_index, observation-masking, tail:N.")]
PromptSources = Annotated[Path | None, path_option(
    PathKind.FILE, "--prompt-sources",
    help="A prompt catalogue to use instead of the bundled prompts/sources.toml.")]
ALL_PROMPTS = ",".join(agents.BUILTIN)
Prompts = Annotated[str, typer.Option(help="Prompts to compare, comma-separated.")]
Dollars = Annotated[float | None, typer.Option(
    "--budget", min=0, max=MAX_DOLLARS,
    help="Start no cell once spend so far plus the cells in flight would pass "
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
        plan = api.plan("backbone", api.summarizers(model or [DEFAULT_MODEL], prompt,
                                                    baseline or []),
                        agent_model, suite=suite, dataset=dataset, ids=instance or [],
                        pattern=filter_, span=slice_, carrier=carrier, steps=steps,
                        prompt_sources=prompt_sources, temperature=temperature,
                        test_timeout=test_timeout)
        options = api.RunOptions(store or default_store(), workers, per_provider, backend,
                                   executor, ray_address, repo_mirror, base_image,
                                   call_deadline, budget=budget)
        fit = api.HistoryChoice.parse(history, history_rule,
                                      not (instance or filter_ or slice_))
        raise typer.Exit(sweep_command(plan, run, options, dry_run, fit))

    _register_prompt(app)


def _register_prompt(app: typer.Typer) -> None:
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
        summarizers = [s for name in names for s in api.summarizers([summarizer], name)]
        summarizers += api.summarizers([], "", baseline or [])
        plan = api.plan("prompt", summarizers, agent_model, suite=suite, dataset=dataset,
                        ids=instance or [], pattern=filter_, span=slice_, carrier=carrier,
                        steps=steps, prompt_sources=prompt_sources, temperature=temperature,
                        test_timeout=test_timeout)
        options = api.RunOptions(store or default_store(), workers, per_provider, backend,
                                   executor, ray_address, repo_mirror, base_image,
                                   call_deadline, budget=budget)
        raise typer.Exit(sweep_command(plan, run, options, dry_run,
                                       api.HistoryChoice.parse(history, history_rule)))
