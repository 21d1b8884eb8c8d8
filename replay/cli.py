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
from rich.text import Text

from replay.commands.options import make_console
from replay.core.errors import Halt, InputError

COMMANDS = ("validate", "cell", "models", "prompts", "collect", "importer", "clean", "sweep",
            "confirm", "retention", "view", "probe", "recipes", "sessions")

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Measure what context compaction costs coding agents.")
errors = make_console(stderr=True)


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
        errors.print(Text.assemble(("error:", "bold red"), f" {exc}"), soft_wrap=True)
        sys.exit(2)
    except typer.TyperException as exc:  # usage errors: typer's own copy of click raises these
        if hasattr(exc, "show"):
            exc.show()
        else:
            errors.print(Text(f"error: {exc.format_message()}"), soft_wrap=True)
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        errors.print("interrupted")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
