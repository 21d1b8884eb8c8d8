"""`replay prompts list|sync|show`: the production compaction prompts and their local copies."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay.commands.options import console
from replay.compaction.registry_fetch import NPM_REGISTRY, PYPI_INDEX
from replay.compaction.sources import (
    PromptText,
    cache_status,
    load_prompt,
    load_sources,
    select,
)
from replay.compaction.sync import registry_client, sync_prompt
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
    """Fetch, check and cache the named prompts (all when `names` is empty or None).

    Prompts already cached with their pinned hashes are skipped unless `force`. Raises an
    InputError (one line) when a registry cannot be reached, a digest or a text hash differs
    from its pin, or a name is unknown.
    """
    console = console or Console()
    sources = load_sources(sources_path)
    selected = [select(sources, name) for name in names] if names else list(sources.values())
    synced: list[PromptText] = []
    with registry_client() as client:
        for source in selected:
            _, prompt = cache_status(source)
            if prompt is not None and not force:
                console.print(Text(f"{source.name}: already synced ({source.spec})"))
                synced.append(prompt)
                continue
            started = time.monotonic()
            with console.status(Text(f"{source.name}: fetching {source.spec}")):
                prompt = sync_prompt(client, source, npm_registry, pypi_index)
            sizes = " + ".join(str(len(text)) for text in prompt.parts.values())
            seconds = time.monotonic() - started
            console.print(Text(
                f"{source.name}: synced {source.spec}, {sizes} chars, hash ok ({seconds:.1f} s)"
            ))
            synced.append(prompt)
    return synced


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


def ensure_prompt(name: str, sources_path: Path | None = None,
                  console: Console | None = None) -> PromptText:
    """A prompt from the cache, synced first (one line says so) when it is missing or stale."""
    status, prompt = cache_status(select(load_sources(sources_path), name))
    if prompt is not None and status == "synced":
        return prompt
    return prompts_sync([name], sources_path=sources_path, console=console)[0]


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
