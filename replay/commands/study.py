"""`replay study SUITE`: the paper's Task Preservation design in one command (see docs/study.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay import api
from replay.api.studies import PAPER_PROMPTS
from replay.commands.inputs import PathKind, path_option
from replay.commands.options import (
    BaseImage,
    CallDeadline,
    Dataset,
    Mirrors,
    StorePath,
    TestTimeout,
    console,
    printed,
    run_name,
    say,
)
from replay.commands.sweep import (
    Backend,
    Dollars,
    DryRun,
    Executor,
    PerProvider,
    PromptSources,
    RayAddress,
    Steps,
    Temperature,
    Workers,
    show_outcome,
)
from replay.commands.sweep_choices import DEFAULT_MODEL
from replay.core.errors import InputError
from replay.core.paths import default_store
from replay.records.plan import DEFAULT_TEMPERATURE
from replay.report.paper_render import render

ESTIMATE_HEADER = f"  {'model':<28} {'calls':>8} {'tokens in':>14} {'tokens out':>12} {'cost':>10}"


def show_study_estimate(found: api.StudyEstimate, design: api.StudyDesign,
                        out: Console, budget: float | None = None) -> None:
    """The dry run: each part's cells and calls, then calls, tokens and cost per model, and
    what `budget` (dollars) would cut."""
    first, prompts, worst = found.backbones.estimate, found.prompts.estimate, found.confirmation
    plan = found.backbones.plan
    say(out, f"study {design.name} on {design.suite} (dry run: nothing is called)")
    say(out, f"  instances {len(plan.instances)} (each validated first: no model call); agent "
             f"{plan.agent}, {plan.steps} steps, backend {plan.backend}")
    parts = (("backbone comparison", design.backbone_run, first, len(design.backbones),
              f"backbones, prompt {design.backbone_prompt}"),
             ("confirmation (at most)", design.backbone_run, worst, 2,
              "more seeds of every pair, were all damaged"),
             ("prompt comparison", design.prompt_run, prompts, len(design.prompts),
              f"prompts, summarizer {design.summarizer}"))
    for title, run, cells, count, what in parts:
        say(out, f"  {title} (run {run}: {count} {what}): {cells.cells} cells, "
                 f"{cells.to_run} to run, {cells.kept} kept in the store; model calls at most "
                 f"{cells.summary_calls + cells.agent_calls} ({cells.summary_calls} summaries, "
                 f"{cells.agent_calls} agent steps)")
    say(out, ESTIMATE_HEADER)
    rows = [*sorted(found.models.items()), ("total", found.total)]
    for alias, use in rows:
        say(out, f"  {alias:<28} {use.calls:>8,} {use.input_tokens:>14,} "
                 f"{use.output_tokens:>12,} {'$' + format(use.cost, ',.2f'):>10}")
    for line in dict.fromkeys([*found.backbones.warnings, *found.prompts.warnings]):
        say(out, line, style="yellow")
    unpriced = sorted({*first.unpriced, *worst.unpriced, *prompts.unpriced})
    if unpriced:
        say(out, f"  no price in models.toml for {', '.join(unpriced)}: not in the cost",
            style="yellow")
    say(out, "  tokens and cost are upper bounds (every step taken; PRE counted in both "
             "comparisons though it runs once); prices from models.toml")
    if budget is not None:
        cost = found.total.cost
        say(out, f"  --budget ${budget:,.2f}: " + (
            "covers the estimate" if cost <= budget else
            f"below the estimate (${cost:,.2f}): no cell starts once spend so far plus the "
            "cells in flight would pass it; run again with more to go on"))


def study_command(design: api.StudyDesign, options: api.RunOptions, dry_run: bool,
                  out_folder: Path | None) -> int:
    """Show the dry run, or run the study and print its tables; the exit code of the run."""
    if dry_run:
        show_study_estimate(api.study_estimate(design, options, printed), design, console,
                            options.budget)
        return 0

    def step(title: str, done: object) -> None:
        say(console, f"{title}:", style="bold")
        if done is None:
            say(console, f"run {design.backbone_run}: no first-round damaged pair to confirm")
        elif isinstance(done, api.SweepOutcome):
            show_outcome(done, options.store, console, grid=False)

    code = api.study(design, options, printed, step)
    found = api.study_report(design, options.store, out_folder)
    render(found.tables, console)
    for path in found.files:
        say(console, f"wrote {path}")
    return code


def register(app: typer.Typer) -> None:
    """Add `replay study` to the command line."""

    @app.command()
    def study(
        suite: Annotated[str, typer.Argument(
            help="The suite: compact-bench (the paper's) or any other.")] = "compact-bench",
        agent_model: Annotated[str, typer.Option(
            help="The one continuation agent (the paper: Kimi-K3).")] = DEFAULT_MODEL,
        model: Annotated[list[str] | None, typer.Option(
            "--model", help="A summarizer backbone: ALIAS or ALIAS=PAPER MODEL (repeatable; "
                            "e.g. opus=Claude Opus 4.8).")] = None,
        backbones: Annotated[Path | None, path_option(
            PathKind.FILE, "--backbones",
            help="A file of backbones, one ALIAS[=PAPER MODEL] a line.")] = None,
        summarizer: Annotated[str | None, typer.Option(
            help="The prompt comparison's fixed summarizer (default the agent's model).")] = None,
        prompts: Annotated[str, typer.Option(
            help="Prompts to compare, comma-separated.")] = ",".join(PAPER_PROMPTS),
        name: Annotated[str | None, typer.Option(
            callback=run_name,
            help="The study's name: its runs are NAME-backbones and NAME-prompts (default "
                 "study-SUITE); the same name resumes it.")] = None,
        dataset: Dataset = None, steps: Steps = 8,
        temperature: Temperature = DEFAULT_TEMPERATURE, workers: Workers = 1,
        per_provider: PerProvider = 8, backend: Backend = None, executor: Executor = "local",
        ray_address: RayAddress = None, dry_run: DryRun = False, store: StorePath = None,
        repo_mirror: Mirrors = None, base_image: BaseImage = None,
        prompt_sources: PromptSources = None, call_deadline: CallDeadline = None,
        budget: Dollars = None, test_timeout: TestTimeout = None,
        out: Annotated[Path | None, path_option(
            PathKind.OUTPUT_FOLDER, "--out",
            help="Folder for the tables' CSV and PNG (default: reports/NAME beside the "
                 "store).")] = None,
    ) -> None:
        """The paper's Task Preservation study: validation, backbone comparison, three-run
        confirmation, prompt comparison and diagnostics, printed as the paper prints them."""
        names = [p.strip() for p in prompts.split(",") if p.strip()]
        if not names:
            raise InputError("--prompts names no prompt")
        design = api.StudyDesign(
            name or f"study-{suite}", agent_model, api.parse_backbones(model or [], backbones),
            summarizer or agent_model, suite, dataset, tuple(names), steps=steps,
            temperature=temperature, prompt_sources=prompt_sources, test_timeout=test_timeout)
        options = api.RunOptions(store or default_store(), workers, per_provider, backend,
                                   executor, ray_address, repo_mirror, base_image, call_deadline,
                                   budget=budget)
        raise typer.Exit(study_command(design, options, dry_run, out))
