"""`replay run`: one cell (PRE or POST) on a restored snapshot, graded, for looking at one case.

Exit code 0 when the cell's tests pass, 1 when they fail (a refused request included) or the
harness failed; 2 for bad input and for faults that stop every call (see `replay.cli`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from replay.commands.options import (
    BackendName,
    BaseImage,
    CallDeadline,
    Dataset,
    Mirrors,
    StorePath,
    Suite,
    TestTimeout,
    console,
    one_history_id,
    say,
)
from replay.commands.prompts import ensure_prompt
from replay.compaction.carriers import CARRIERS
from replay.compaction.summarize import parse_summarizer
from replay.core.errors import Halt, InputError
from replay.core.paths import default_store
from replay.environments.backends import close_backend, make_backend
from replay.environments.recipes import load_recipe
from replay.histories.boundaries import parse_rule
from replay.histories.records import find_history
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.judge.timeouts import cell_timeout, gold_seconds
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.keys import api_key
from replay.models.registry import resolve
from replay.models.retry import Breaker
from replay.models.types import ModelSpec
from replay.records.cell import CellId, CellResult
from replay.records.plan import DEFAULT_TEMPERATURE
from replay.store import Store
from replay.store.artifacts import CONTINUATIONS, TRACE
from replay.sweep.cells import INPUT_FAULT, CellTask, Settings, run_cell
from replay.sweep.summaries import kept_summary


@dataclass(frozen=True)
class RunOptions:
    """What `replay run` was asked to do."""

    arm: str
    agent_model: str
    summarizer: str | None = None
    carrier: str = "summary-only"
    steps: int = 8
    seed_index: int = 0
    history_id: str | None = None
    history_rule: str | None = None
    call_deadline: float | None = None
    temperature: float = DEFAULT_TEMPERATURE
    test_timeout: float | None = None  # None: derived from the instance's validation, if any


def _task(instance: Instance, options: RunOptions, store: Store) -> CellTask:
    """The cell `replay run` is asked for, as a sweep would give it to a worker."""
    if options.arm not in ("pre", "post"):
        raise InputError(f"unknown arm {options.arm!r}: use pre or post")
    if options.carrier not in CARRIERS:
        raise InputError(f"unknown carrier {options.carrier!r}: use {' or '.join(CARRIERS)}")
    backbone = prompt = judge = None
    summarizer = ""
    if options.arm == "post":
        if not options.summarizer:
            raise InputError("--arm post needs --summarizer MODEL:PROMPT (or anchor_index, "
                             "observation-masking, tail:N)")
        summarizer = options.summarizer
        name = parse_summarizer(summarizer)
        if not name.mechanical:
            backbone = resolve(name.backbone or "")
            api_key(backbone)
        if name.source_prompt:
            prompt = ensure_prompt(name.source_prompt, console=console)
        if name.fused:
            judge = resolve(name.fused.judge)
            api_key(judge)
    history = find_history(instance, store=store, history_id=options.history_id,
                           rule=options.history_rule)
    cell = CellId(instance.instance_id, options.arm, summarizer, options.seed_index)
    return CellTask(cell, instance, history, backbone, prompt, judge, options.temperature)


def run_command(instance: Instance, options: RunOptions, store_path: Path,
                mirrors: Path | None, console: Console, backend: str = "local",
                base_image: str | None = None) -> int:
    """Run one cell (PRE or POST) through the sweep's cell pipeline, keeping its summary and
    continuation in the store as a sweep does; 0 when its tests pass, 1 when they fail (or a
    request was refused) or the harness failed. Raises `Halt` for a refused key, a model not
    found or an unreachable endpoint. Bad input is refused before the store is opened to
    write (or created)."""
    agent_spec = resolve(options.agent_model)
    api_key(agent_spec)
    settings = Settings(agent_spec, options.carrier, options.steps, options.temperature)
    recipe = load_recipe(instance, mirrors=mirrors)
    with Store.peek(store_path) as seen:  # all input checked before the store is written
        task = _task(instance, options, seen)
    chosen = make_backend(backend, mirrors, base_image)
    clients: list[ModelClient] = []
    breaker = Breaker()
    try:
        with Store.open(store_path) as store, CallCache(store_path) as cache:
            validation = store.validation(instance.instance_id, chosen.name)
            task = replace(task, gold_seconds=gold_seconds(validation),
                           test_timeout=cell_timeout(options.test_timeout, validation))

            def model(spec: ModelSpec) -> ModelClient:
                clients.append(ModelClient(spec, cache, deadline=options.call_deadline,
                                           breaker=breaker))
                return clients[-1]

            result = run_cell(task, settings, store,
                              lambda: (chosen.start(instance, recipe), recipe), model)
            if breaker.tripped is not None:
                raise Halt(breaker.tripped)
            if result.error and result.error.startswith(INPUT_FAULT):
                raise InputError(result.error.removeprefix(INPUT_FAULT).split(": ", 1)[-1])
            _report(task, result, store, console)
    finally:
        for client in clients:
            client.close()
        close_backend(chosen)
    return 0 if result.passed else 1


def _report(task: CellTask, result: CellResult, store: Store, console: Console) -> None:
    cell = task.cell
    if result.summary:
        summary = kept_summary(store, result.summary)
        chars = len(summary.text) if summary is not None else 0
        say(console, f"summary ({chars} chars) kept as {result.summary[:12]}")
    shown, style = (("error", "red") if result.status == "error" else
                    ("tests pass", "green") if result.passed else
                    (f"tests timed out after {result.timed_out:g} s", "yellow")
                    if result.timed_out is not None else ("tests fail", "yellow"))
    console.print(Text.assemble(f"{cell.instance_id} {cell.arm}: ", (shown, style),
                                f" {result.error}" if result.error else ""), soft_wrap=True)
    if result.refused:
        say(console, f"  {result.refused}")
    if result.status == "error":
        return
    found = result.diagnostics
    say(console, f"  steps {found['steps']}, actions {found['actions']}, exit "
                 f"{found['exit_reason']}, edited {', '.join(found['files_edited']) or 'nothing'}")
    if result.continuation:
        reused = " (kept from an earlier run)" if result.reused else ""
        say(console, f"  trace {store.folder(CONTINUATIONS, result.continuation) / TRACE}{reused}")


def register(app: typer.Typer) -> None:
    """Add `replay run` to the command line."""

    @app.command()
    def run(
        instance: Annotated[str, typer.Option("--instance", help="Instance id.")],
        arm: Annotated[str, typer.Option(help="pre (full history) or post (a summary).")],
        agent_model: Annotated[str, typer.Option(
            help="The continuation agent: an alias or "
                 "PROVIDER:MODEL[@URL][#KEY_ENV][?SETTINGS].")],
        summarizer: Annotated[str | None, typer.Option(
            help="For post: MODEL:PROMPT, anchor_index, observation-masking or tail:N.")] = None,
        carrier: Annotated[str, typer.Option(help="summary-only or native.")] = "summary-only",
        steps: Annotated[int, typer.Option(min=1, help="Step limit.")] = 8,
        seed_index: Annotated[int, typer.Option(
            min=0, help="Sample index: the request's seed, and part of the cache key.")] = 0,
        temperature: Annotated[float, typer.Option(
            min=0, help="What the agent and the summarizer sample at (a model's own "
                        "temperature setting wins).")] = DEFAULT_TEMPERATURE,
        suite: Suite = "demo", dataset: Dataset = None, store: StorePath = None,
        repo_mirror: Mirrors = None, backend: BackendName = "local", base_image: BaseImage = None,
        history: Annotated[str | None, typer.Option(
            callback=one_history_id,
            help="A stored history's id (or prefix), from `replay collect` or `replay import`; "
                 "default: the instance's bundled history.")] = None,
        history_rule: Annotated[str | None, typer.Option(
            help="Pick the stored history cut by this boundary rule, e.g. steps:6.")] = None,
        call_deadline: CallDeadline = None, test_timeout: TestTimeout = None,
    ) -> None:
        """Run one continuation on a restored snapshot and grade it (for debugging one case)."""
        rule = parse_rule(history_rule).text if history_rule else None
        chosen = choose_instances(suite, dataset, [instance], None, None)[0]
        options = RunOptions(arm=arm, agent_model=agent_model, summarizer=summarizer,
                             carrier=carrier, steps=steps, seed_index=seed_index,
                             history_id=history, history_rule=rule, call_deadline=call_deadline,
                             temperature=temperature, test_timeout=test_timeout)
        code = run_command(chosen, options, store or default_store(),
                           repo_mirror, console, backend, base_image)
        raise typer.Exit(code)
