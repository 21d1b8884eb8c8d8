"""The `replay` command: parses options, calls the engine, prints. Bad input, and a fault that
halts the command (an endpoint unreachable, a key refused), are one line and exit 2.

Each command lives in a module of `replay.commands` with a `register(app)` function.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Annotated

import typer
from rich.console import Console

from replay.errors import Halt, InputError

COMMANDS = ("validate", "run", "models", "prompts", "collect", "importer", "clean", "sweep",
            "retention", "view", "probe")

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Measure what context compaction costs coding agents.")
errors = Console(stderr=True)


@app.callback()
def _options(verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


def _register_commands() -> None:
    for name in COMMANDS:
        importlib.import_module(f"replay.commands.{name}").register(app)


def main() -> None:
    """Entry point: one line and exit 2 for bad input or a halt, 130 on Ctrl-C."""
    _register_commands()
    try:
        code = app(standalone_mode=False)
    except (InputError, Halt) as exc:
        errors.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except typer.TyperException as exc:  # usage errors: typer's own copy of click raises these
        if hasattr(exc, "show"):
            exc.show()
        else:
            errors.print(f"error: {exc.format_message()}", highlight=False)
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        errors.print("interrupted")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
