"""`replay run`: one continuation (PRE or POST) on a restored snapshot, graded, for debugging."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay.agent import AgentConfig
from replay.backends import close_backend, make_backend
from replay.commands.options import (
    BackendName,
    BaseImage,
    Dataset,
    Mirrors,
    StorePath,
    Suite,
    console,
)
from replay.commands.prompts import ensure_prompt
from replay.compaction.carriers import post_messages
from replay.compaction.sources import PromptText
from replay.compaction.summarize import Summary, parse_summarizer, summarize
from replay.continuation import Continuation, continue_and_grade, model_id
from replay.errors import InputError
from replay.histories import History, find_history
from replay.instances import Instance
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.keys import api_key
from replay.models.registry import resolve
from replay.paths import TESTBED, default_store, repo_mirrors_from_env
from replay.recipes import load_recipe
from replay.selection import choose_instances
from replay.store import Store


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


def make_summary(history: History, options: RunOptions,
                 cache: CallCache) -> tuple[Summary, PromptText | None]:
    """Summarize the history with the summarizer the options name; also its prompt, if any."""
    if not options.summarizer:
        raise InputError("--arm post needs --summarizer MODEL:PROMPT (or anchor_index, "
                         "observation-masking, tail:N)")
    name = parse_summarizer(options.summarizer)
    if name.mechanical:
        return summarize(history.messages, name), None
    spec = resolve(name.backbone or "")
    api_key(spec)
    prompt = ensure_prompt(name.prompt or "", console=console)
    with ModelClient(spec, cache) as backbone:
        return summarize(history.messages, name, prompt, backbone, options.seed_index), prompt


def run_command(instance: Instance, options: RunOptions, store_path: Path,
                mirrors: Path | None, console: Console, backend: str = "local",
                base_image: str | None = None) -> int:
    """Run one continuation; 0 when its tests pass, 1 when they fail or the harness failed."""
    if options.arm not in ("pre", "post"):
        raise InputError(f"unknown arm {options.arm!r}: use pre or post")
    agent_spec = resolve(options.agent_model)
    api_key(agent_spec)
    recipe = load_recipe(instance)
    chosen = make_backend(backend, mirrors, base_image)
    store = Store.open(store_path)
    cache = CallCache(store_path)
    try:
        history = find_history(instance, store=store, history_id=options.history_id,
                               rule=options.history_rule)
        if options.arm == "pre":
            messages = history.messages
        else:
            summary, prompt = make_summary(history, options, cache)
            record = {"summarizer": summary.summarizer, "text": summary.text,
                      "messages": summary.messages, "calls": len(summary.requests),
                      "input_tokens": summary.input_tokens,
                      "output_tokens": summary.output_tokens, "cost": summary.cost}
            path = store.write_artifact(json.dumps(record, indent=1).encode(), "summaries",
                                        instance.instance_id, f"{_slug(options)}.json")
            console.print(f"summary ({len(summary.text)} chars) {path}", highlight=False)
            messages = post_messages(summary, history.messages, instance.problem_statement,
                                     TESTBED, options.carrier, prompt)
        env = chosen.start(instance, recipe)
        with ModelClient(agent_spec, cache) as agent:
            result = continue_and_grade(
                instance, history, env, recipe, agent, model_id(agent_spec), messages,
                options.arm, AgentConfig(max_steps=options.steps), store, options.seed_index)
        store.write_artifact(json.dumps(_result_record(result), indent=1).encode(),
                             *result.artifacts.relative_to(store.artifacts).parts,
                             "result.json")
    finally:
        cache.close()
        store.close()
        close_backend(chosen)
    _report(result, console)
    return 0 if result.passed else 1


def _slug(options: RunOptions) -> str:
    name = (options.summarizer or "").replace("/", "_").replace(":", "--")
    return f"{name}-{options.carrier}-seed{options.seed_index}"


def _result_record(result: Continuation) -> dict[str, object]:
    trace = result.trace
    return {"instance_id": result.instance_id, "arm": result.arm, "passed": result.passed,
            "error": result.error, "steps": trace.steps, "exit_reason": trace.exit_reason,
            "actions": len(trace.actions), "files_edited": trace.files_edited,
            "grade": result.grade.to_dict() if result.grade else None}


def _report(result: Continuation, console: Console) -> None:
    trace = result.trace
    if result.passed is None:
        verdict = f"[red]error[/] {result.error}"
    else:
        verdict = "[green]tests pass[/]" if result.passed else "[yellow]tests fail[/]"
    console.print(f"{result.instance_id} {result.arm}: {verdict}", highlight=False)
    console.print(f"  steps {trace.steps}, actions {len(trace.actions)}, exit "
                  f"{trace.exit_reason}, edited {', '.join(trace.files_edited) or 'nothing'}",
                  highlight=False)
    reused = " (kept from an earlier run)" if result.reused else ""
    console.print(f"  trace {result.trace_path}{reused}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `replay run` to the command line."""

    @app.command()
    def run(
        instance: Annotated[str, typer.Option("--instance", help="Instance id.")],
        arm: Annotated[str, typer.Option(help="pre (full history) or post (a summary).")],
        agent_model: Annotated[str, typer.Option(
            help="The continuation agent: an alias or PROVIDER:MODEL[@URL][#KEY_ENV].")],
        summarizer: Annotated[str | None, typer.Option(
            help="For post: MODEL:PROMPT, anchor_index, observation-masking or tail:N.")] = None,
        carrier: Annotated[str, typer.Option(help="summary-only or native.")] = "summary-only",
        steps: Annotated[int, typer.Option(min=1, help="Step limit.")] = 8,
        seed_index: Annotated[int, typer.Option(min=0, help="Sample index (cache key).")] = 0,
        suite: Suite = "demo", dataset: Dataset = None, store: StorePath = None,
        repo_mirror: Mirrors = None, backend: BackendName = "local", base_image: BaseImage = None,
        history: Annotated[str | None, typer.Option(
            help="A stored history's id (or prefix), from `replay collect` or `replay import`; "
                 "default: the instance's bundled history.")] = None,
        history_rule: Annotated[str | None, typer.Option(
            help="Pick the stored history cut by this boundary rule, e.g. steps:6.")] = None,
    ) -> None:
        """Run one continuation on a restored snapshot and grade it (for debugging one case)."""
        chosen = choose_instances(suite, dataset, [instance], None, None)[0]
        options = RunOptions(arm=arm, agent_model=agent_model, summarizer=summarizer,
                             carrier=carrier, steps=steps, seed_index=seed_index,
                             history_id=history, history_rule=history_rule)
        code = run_command(chosen, options, store or default_store(),
                           repo_mirror or repo_mirrors_from_env(), console, backend, base_image)
        raise typer.Exit(code)
