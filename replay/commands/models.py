"""`replay models`: every model alias, its endpoint, window, prices, request settings and whether
its key is set; `replay models --check MODEL` tries one model in a few small requests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay import api
from replay.commands.inputs import PathKind, path_option
from replay.commands.options import console, say


def models_command(user_file: Path | None, console: Console | None = None) -> None:
    """Print the model aliases as a table."""
    table = Table(title="models (prices: USD per million tokens, list prices to check)")
    for column in ("alias", "provider", "model", "base URL", "context", "in $", "cached in $",
                   "out $", "key", "settings"):
        numeric = column in ("context", "in $", "cached in $", "out $")
        table.add_column(column, justify="right" if numeric else "left", overflow="fold")
    for row in api.models(user_file):
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
        user_file: Annotated[Path | None, path_option(
            PathKind.FILE, "--models-file",
            help="TOML file of aliases adding to or overriding the built-ins.")
        ] = None,
        check: Annotated[str | None, typer.Option(
            "--check", help="Try this alias or ad-hoc spec: tool calls, a summary, seeds, "
                            "its context (exit 1 when tool calls or summaries fail).")] = None,
    ) -> None:
        """List model aliases: provider, endpoint, window, prices, and whether each key is set."""
        if check is None:
            models_command(user_file, console)
            return
        worked = api.check_model(check, user_file, lambda line: say(console, line))
        raise typer.Exit(0 if worked else 1)
