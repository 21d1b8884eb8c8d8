"""`replay prompts list|sync|show`: the production compaction prompts and their local copies."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay import api
from replay.commands.options import Printed, console
from replay.compaction.registry_fetch import NPM_REGISTRY, PYPI_INDEX
from replay.compaction.sources import PromptText, cache_status, load_prompt, load_sources
from replay.core.errors import InputError

STATUS_STYLES = {"synced": "green", "missing": "yellow", "stale": "red"}


def prompts_list(sources_path: Path | None = None, console: Console | None = None) -> None:
    """Print each prompt's agent, package, parts (length, sha256) and whether it is synced."""
    table = Table(title="production compaction prompts")
    table.add_column("prompt")
    table.add_column("package", overflow="fold")
    table.add_column("part")
    table.add_column("chars", justify="right")
    table.add_column("status")
    table.add_column("sha256", overflow="fold")
    for source in load_sources(sources_path).values():
        status, _ = cache_status(source)
        for index, part in enumerate(source.parts):
            first = index == 0
            table.add_row(
                Text.assemble(source.name, "\n", (source.agent, "dim")) if first else "",
                Text(source.spec) if first else "",
                Text(part.role),
                str(part.chars),
                Text(status, STATUS_STYLES[status]) if first else "",
                Text(part.sha256),
            )
    (console or Console()).print(table)


def prompts_sync(
    names: list[str] | None,
    *,
    force: bool = False,
    sources_path: Path | None = None,
    npm_registry: str = NPM_REGISTRY,
    pypi_index: str = PYPI_INDEX,
    console: Console | None = None,
) -> list[PromptText]:
    """Sync the named prompts (all when `names` is empty or None; see `api.sync_prompts`),
    printing a line for each."""
    return api.sync_prompts(names, force=force, sources=sources_path, npm_registry=npm_registry,
                            pypi_index=pypi_index, listener=Printed(console or Console()))


def prompts_show(name: str, role: str | None = None, sources_path: Path | None = None) -> None:
    """Write a synced prompt's text to stdout: one part by role, or every part with a heading."""
    prompt = load_prompt(name, sources_path)
    if role is not None:
        if role not in prompt.parts:
            known = ", ".join(prompt.parts)
            raise InputError(f"prompt {name!r} has no {role!r} part; parts: {known}")
        _write(prompt.parts[role])
        return
    for part_role, text in prompt.parts.items():
        if len(prompt.parts) > 1:
            sys.stdout.write(f"--- {part_role} ---\n")
        _write(text)


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def register(app: typer.Typer) -> None:
    """Add `replay prompts list|sync|show` to the command line."""
    group = typer.Typer(no_args_is_help=True,
                        help="Production compaction prompts: list, sync, show.")
    app.add_typer(group, name="prompts")

    @group.command("list")
    def list_command() -> None:
        """Each prompt's agent, package and version, length, sha256, and whether it is synced."""
        prompts_list(console=console)

    @group.command("sync")
    def sync_command(
        names: Annotated[list[str] | None, typer.Argument(help="Prompts (default all).")] = None,
        force: Annotated[bool, typer.Option(help="Download again even if cached.")] = False,
    ) -> None:
        """Download the pinned packages, cut each prompt out, check its sha256, and cache it."""
        prompts_sync(names, force=force, console=console)

    @group.command("show")
    def show_command(
        name: str,
        role: Annotated[str | None, typer.Option(help="system, user or summary-prefix.")] = None,
    ) -> None:
        """Print a synced prompt's text."""
        prompts_show(name, role)
