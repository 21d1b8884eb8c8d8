"""The `replay` command: parses options, calls the engine, prints. Bad input, and a fault that
halts the command (an endpoint unreachable, a key refused), are one line and exit 2.

Each command lives in a module of `replay.commands` with a `register(app)` function.
"""

from __future__ import annotations

import functools
import importlib
import logging
import sys
from typing import Annotated, Any

import typer
from rich.text import Text

from replay.commands.inputs import usage_line
from replay.commands.options import make_console
from replay.core.errors import Halt, InputError
from replay.core.names import has_control, shown
from replay.core.paths import checked_home, environments_dir

COMMANDS = ("validate", "cell", "models", "prompts", "collect", "importer", "clean", "sweep",
            "confirm", "retention", "view", "probe", "recipes", "study", "sessions")

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Measure what context compaction costs coding agents.")
errors = make_console(stderr=True)


@app.callback()
def _options(verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False) -> None:
    checked_home()
    environments_dir()  # REPLAY_ENVIRONMENTS, when set, must name a folder
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


def _register_commands() -> None:
    if app.registered_commands or app.registered_groups:
        return  # already registered: `run` may be called more than once in one process
    for name in COMMANDS:
        importlib.import_module(f"replay.commands.{name}").register(app)


def refuse_control_characters(argv: list[str]) -> None:
    """Bad input when a command-line value holds a control character (a newline, an escape):
    no option of replay takes one, and printed back it would forge a line or drive the
    terminal."""
    for index, value in enumerate(argv):
        if has_control(value):
            raise InputError(f"argument {index + 1} '{shown(value)}' holds a control character: "
                             "no option takes one")


@functools.cache
def command() -> Any:
    """The command line's definition, made once per process (typer makes it from the
    functions' signatures, which takes a tenth of a second)."""
    _register_commands()
    return typer.main.get_command(app)


def run(argv: list[str]) -> int:
    """Run the command line `argv` (without the program's name) and return its exit code: one
    line on stderr and 2 for bad input or a halt, 130 on Ctrl-C."""
    try:
        refuse_control_characters(argv)
        code = command().main(args=argv, prog_name="replay", standalone_mode=False)
    except (InputError, Halt) as exc:
        errors.print(Text.assemble(("error:", "bold red"), f" {shown(exc)}"), soft_wrap=True)
        return 2
    except typer.TyperException as exc:  # usage errors: typer's own copy of click raises these
        if type(exc).__name__ == "NoArgsIsHelpError" and hasattr(exc, "show"):
            exc.show()  # the help of a group given no command
            return exc.exit_code
        errors.print(Text(f"error: {shown(usage_line(exc))}"), soft_wrap=True)
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort):
        errors.print("interrupted")
        return 130
    return code if isinstance(code, int) else 0


def main() -> None:
    """Entry point: see `run`."""
    sys.exit(run(sys.argv[1:]))
