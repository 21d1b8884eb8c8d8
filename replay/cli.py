"""The `replay` command: parses options, calls the engine, prints. Bad input exits 2."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import click
import typer
from rich.console import Console

from replay.errors import InputError
from replay.paths import default_store, repo_mirrors_from_env

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Measure what context compaction costs coding agents.")
console = Console()
errors = Console(stderr=True)

Suite = Annotated[str, typer.Option(
    help="Suite: a bundled name (see instances/) or a folder holding a suite.toml.")]
Dataset = Annotated[str | None, typer.Option(
    help="SWE-bench records: a .json/.jsonl/.parquet file or a Hugging Face dataset name.")]
Ids = Annotated[list[str] | None, typer.Option("--instance", help="Instance id (repeatable).")]
Pattern = Annotated[str | None, typer.Option("--filter", help="Regex on instance ids.")]
Span = Annotated[str | None, typer.Option("--slice", help="START:STOP of the selection.")]
StorePath = Annotated[Path | None, typer.Option(
    "--store", help="SQLite results file (default runs/replay.db).")]
Mirrors = Annotated[Path | None, typer.Option(
    "--repo-mirror", help="Folder of bare git mirrors (full history) instead of GitHub.")]


@app.callback()
def _options(verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


@app.command()
def validate(suite: Suite = "demo", dataset: Dataset = None, instance: Ids = None,
             filter_: Pattern = None, slice_: Span = None, store: StorePath = None,
             repo_mirror: Mirrors = None,
             rebuild: Annotated[bool, typer.Option(help="Rebuild environments.")] = False) -> None:
    """Check instances before any model is called: solvable, a real repair, restorable."""
    from replay.commands.validate import validate_command
    from replay.selection import choose_instances

    chosen = choose_instances(suite, dataset, instance or [], filter_, slice_)
    code = validate_command(chosen, store or default_store(), repo_mirror or
                            repo_mirrors_from_env(), rebuild, console)
    raise typer.Exit(code)


@app.command()
def models(user_file: Annotated[Path | None, typer.Option(
        "--models-file", help="TOML file of aliases adding to or overriding the built-in ones.")]
        = None) -> None:
    """List model aliases: provider, endpoint, window, prices, and whether each key is set."""
    from replay.commands.models import models_command

    models_command(user_file, console)


@app.command()
def run(instance: Annotated[str, typer.Option("--instance", help="Instance id.")],
        arm: Annotated[str, typer.Option(help="pre (full history) or post (a summary).")],
        agent_model: Annotated[str, typer.Option(
            help="The continuation agent's model: an alias or PROVIDER:MODEL[@URL][#KEY_ENV].")],
        summarizer: Annotated[str | None, typer.Option(
            help="For post: MODEL:PROMPT, anchor_index, observation-masking or tail:N.")] = None,
        carrier: Annotated[str, typer.Option(help="summary-only or native.")] = "summary-only",
        steps: Annotated[int, typer.Option(min=1, help="Step limit.")] = 8,
        seed_index: Annotated[int, typer.Option(min=0, help="Sample index (cache key).")] = 0,
        suite: Suite = "demo", dataset: Dataset = None, store: StorePath = None,
        repo_mirror: Mirrors = None) -> None:
    """Run one continuation on a restored snapshot and grade it (for debugging one case)."""
    from replay.commands.run import RunOptions, run_command
    from replay.selection import choose_instances

    chosen = choose_instances(suite, dataset, [instance], None, None)[0]
    options = RunOptions(arm=arm, agent_model=agent_model, summarizer=summarizer,
                         carrier=carrier, steps=steps, seed_index=seed_index)
    code = run_command(chosen, options, store or default_store(),
                       repo_mirror or repo_mirrors_from_env(), console)
    raise typer.Exit(code)


prompts_app = typer.Typer(no_args_is_help=True,
                          help="Production compaction prompts: list, sync, show.")
app.add_typer(prompts_app, name="prompts")


@prompts_app.command("list")
def prompts_list() -> None:
    """Each prompt's agent, package and version, length, sha256, and whether it is synced."""
    from replay.commands.prompts import prompts_list as list_prompts

    list_prompts(console=console)


@prompts_app.command("sync")
def prompts_sync(
        names: Annotated[list[str] | None, typer.Argument(help="Prompts to sync (all).")] = None,
        force: Annotated[bool, typer.Option(help="Download again even if cached.")] = False,
) -> None:
    """Download the pinned packages, cut each prompt out, check its sha256, and cache it."""
    from replay.commands.prompts import prompts_sync as sync_prompts

    sync_prompts(names, force=force, console=console)


@prompts_app.command("show")
def prompts_show(name: str,
                 role: Annotated[str | None, typer.Option(help="system or user.")] = None) -> None:
    """Print a synced prompt's text."""
    from replay.commands.prompts import prompts_show as show_prompt

    show_prompt(name, role)


def main() -> None:
    """Entry point: one line and exit 2 for bad input, 130 on Ctrl-C."""
    try:
        code = app(standalone_mode=False)
    except InputError as exc:
        errors.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, click.exceptions.Abort):
        errors.print("interrupted")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
