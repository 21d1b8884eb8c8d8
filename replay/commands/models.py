"""`replay models`: every model alias, its endpoint, window, prices, request settings and whether
its key is set; `replay models --check MODEL` tries one model in a few small requests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay.commands.options import console, say
from replay.models.keys import key_is_set
from replay.models.registry import load_registry
from replay.models.types import ModelSpec

SETTINGS = ("timeout", "deadline", "tool_choice", "temperature", "max_tokens", "extra_body")


@dataclass(frozen=True)
class ModelRow:
    """One alias as listed. `key_set` is None when the model needs no key."""

    alias: str
    provider: str
    model: str
    base_url: str
    context_window: int | None
    price_in: float
    price_out: float
    key_env: str
    key_set: bool | None
    settings: str = ""
    price_cached_in: float = 0.0


def settings_text(spec: ModelSpec) -> str:
    """The settings a spec sets, as `name=value` (`-` when none)."""
    found = spec.model_dump(include=set(SETTINGS), exclude_defaults=True)
    return ", ".join(f"{name}={json.dumps(found[name]) if name == 'extra_body' else found[name]}"
                     for name in SETTINGS if found.get(name) is not None) or "-"


def models_table(user_file: Path | None) -> list[ModelRow]:
    """The rows of `replay models`, sorted by alias; key values are never read out."""
    registry = load_registry(user_file)
    return [
        ModelRow(alias, spec.provider, spec.model, spec.base_url, spec.context_window,
                 spec.price_in, spec.price_out, spec.key_env,
                 key_is_set(spec.key_env) if spec.key_env else None, settings_text(spec),
                 spec.cached_price())
        for alias, spec in sorted(registry.items())
    ]


def models_command(user_file: Path | None, console: Console | None = None) -> None:
    """Print the model aliases as a table."""
    table = Table(title="models (prices: USD per million tokens, list prices to check)")
    for column in ("alias", "provider", "model", "base URL", "context", "in $", "cached in $",
                   "out $", "key", "settings"):
        numeric = column in ("context", "in $", "cached in $", "out $")
        table.add_column(column, justify="right" if numeric else "left", overflow="fold")
    for row in models_table(user_file):
        if row.key_set is None:
            key = Text("none needed")
        else:
            key = Text(f"{row.key_env} {'set' if row.key_set else 'unset'}",
                       "green" if row.key_set else "red")
        table.add_row(*(Text(value) for value in (
            row.alias, row.provider, row.model, row.base_url,
            f"{row.context_window:,}" if row.context_window else "?", f"{row.price_in:.2f}",
            f"{row.price_cached_in:.3f}", f"{row.price_out:.2f}")), key, Text(row.settings))
    (console or Console()).print(table)


def register(app: typer.Typer) -> None:
    """Add `replay models` to the command line."""

    @app.command()
    def models(
        user_file: Annotated[Path | None, typer.Option(
            "--models-file", help="TOML file of aliases adding to or overriding the built-ins.")
        ] = None,
        check: Annotated[str | None, typer.Option(
            "--check", help="Try this alias or ad-hoc spec: tool calls, a summary, seeds, "
                            "its context (exit 1 when tool calls or summaries fail).")] = None,
    ) -> None:
        """List model aliases: provider, endpoint, window, prices, and whether each key is set."""
        if check is None:
            models_command(user_file, console)
            return
        from replay.models.check import check_model
        from replay.models.registry import resolve

        spec = resolve(check, user_file)
        say(console, f"checking {spec.alias} ({spec.provider}:{spec.model} at {spec.base_url})")
        raise typer.Exit(0 if check_model(spec, lambda line: say(console, line)) else 1)
