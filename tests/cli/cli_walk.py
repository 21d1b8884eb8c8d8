"""The command line's own definition, walked: every command and subcommand of `replay --help`
with its options and arguments, what kind of value each takes, and the values of the wrong kind
for it. `test_cli_contract.py` feeds them; an option added tomorrow is walked the day it is
added."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from replay.cli import _register_commands, app
from replay.commands.inputs import PathKind
from replay.commands.options import DATASET, SUITE

# Values of every option that takes one: control characters, which no option takes.
CONTROLS = ("a\nforged line", "a\x1b[2Jb", "a\rb", "\u202eevil")


@dataclass(frozen=True)
class Param:
    """One option or argument of one command."""

    command: tuple[str, ...]
    name: str
    flag: str | None  # None for an argument
    annotation: Any
    metavar: str | None
    required: bool
    is_flag: bool
    low: float | None
    high: float | None

    @property
    def shown(self) -> str:
        """How an error names it: its flag, or an argument's name in capitals."""
        return self.flag or self.name.upper()

    def argv(self, value: str) -> list[str]:
        """The command line's words giving it `value`."""
        return [self.flag, value] if self.flag else [value]


def commands() -> dict[tuple[str, ...], list[Param]]:
    """Every command (subcommands of groups included, hidden ones too) and its parameters."""
    _register_commands()
    found: dict[tuple[str, ...], list[Param]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, (*path, name))
            return
        found[path] = [_param(path, param) for param in command.params
                       if param.name != "help"]

    walk(typer.main.get_command(app), ())
    return found


def _param(command: tuple[str, ...], param: Any) -> Param:
    flags = sorted((flag for flag in param.opts if flag.startswith("--")), key=len)
    return Param(command, param.name, flags[-1] if param.param_type_name == "option" else None,
                 param.type_descriptor.annotation, param.metavar, bool(param.required),
                 bool(getattr(param, "is_flag", False)), param.min, param.max)


def numeric(param: Param) -> bool:
    """Whether it takes an int or a float."""
    return param.annotation in (int, float) and not param.is_flag


def bad_numbers(param: Param) -> list[str]:
    """Values out of its range or not numbers: below, above, negative, zero where refused,
    huge, nan, inf, not a number (and a fraction for an integer)."""
    low, high = param.low, param.high
    assert low is not None and high is not None and math.isfinite(low) and \
        math.isfinite(high), f"{param.command} {param.shown} has no finite range"
    integer = param.annotation is int
    values = [str(int(low) - 1) if integer else repr(low - 1),
              str(int(high) + 1) if integer else repr(high * 2 + 1),
              "-1", "0", "1e300", str(10 ** 30), "nan", "inf", "-inf", "abc", "1.5"]
    return [value for value in values if not _within(value, low, high, integer)]


def _within(value: str, low: float, high: float, integer: bool) -> bool:
    try:
        number = int(value) if integer else float(value)
    except ValueError:
        return False
    return low <= number <= high


@dataclass(frozen=True)
class Places:
    """Paths of every kind, made under one folder the test watches."""

    file: Path  # a regular file
    folder: Path  # a folder
    fifo: Path
    socket: Path
    device: Path  # /dev/null
    missing: Path  # nothing there, in a folder that exists
    under_file: Path  # a path whose parent is a file
    missing_rows: Path  # nothing there, named as a dataset file (.jsonl)


# What each kind of path must not be given, as attribute names of `Places`.
WRONG_PATHS = {
    PathKind.FILE.value: ("folder", "fifo", "socket", "device", "missing", "under_file"),
    PathKind.FOLDER.value: ("file", "fifo", "socket", "device", "missing", "under_file"),
    PathKind.FILE_OR_FOLDER.value: ("fifo", "socket", "device", "missing", "under_file"),
    PathKind.OUTPUT_FILE.value: ("folder", "fifo", "socket", "device", "under_file"),
    PathKind.OUTPUT_FOLDER.value: ("file", "fifo", "socket", "device", "under_file"),
    PathKind.STORE.value: ("folder", "fifo", "socket", "device", "under_file"),
    SUITE: ("file", "fifo", "socket", "device"),
    DATASET: ("folder", "fifo", "socket", "device", "missing_rows"),
}


def wrong_paths(param: Param, places: Places) -> list[str]:
    """Paths of the wrong kind for a path parameter (which must say its kind, see
    `replay.commands.inputs.PathKind`)."""
    assert param.metavar in WRONG_PATHS, (
        f"{param.command} {param.shown} takes a path but does not say which kind: declare it "
        "with replay.commands.inputs.path_option or path_argument")
    return [str(getattr(places, name)) for name in WRONG_PATHS[param.metavar]]


def takes_path(param: Param) -> bool:
    """Whether it takes a path (or a name that may be a path, as a suite or a dataset)."""
    annotation = param.annotation
    return annotation is Path or annotation == list[Path] or param.metavar in WRONG_PATHS
