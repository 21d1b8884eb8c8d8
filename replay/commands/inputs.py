"""Typed options whose values are checked when the command line is read, before any model call,
build or store write: paths by what they must be, numbers by their range.

- `path_option(kind, ...)`: a `typer.Option` for a path; `kind` is one of `PathKind` (an input
  file, an input folder, either, an output file, an output folder, the store). Its metavar
  names the kind, which is how the command-line contract test knows what to feed it.
- `path_argument(kind, ...)`: the same for a positional argument.
- `number_option(low, high, ...)`: a `typer.Option` for an int or a float from `low` to `high`
  (both included); nan, inf and anything outside is one line naming the option and the range.
  The ranges commands share are in `replay.core.limits` (see docs/cli-contract.md).
"""

from __future__ import annotations

import enum
import os
from pathlib import Path
from typing import Any

import typer

from replay.core.errors import InputError
from replay.core.input_paths import input_problem, kind, output_problem
from replay.core.names import shown
from replay.core.paths import default_store


class PathKind(enum.StrEnum):
    """What a path option must name; the value is the option's metavar."""

    FILE = "FILE"  # an existing regular file, read
    FOLDER = "FOLDER"  # an existing folder, read
    FILE_OR_FOLDER = "PATH"  # an existing regular file or folder, read
    OUTPUT_FILE = "OUT_FILE"  # a file written: a file or nothing there, its folder makeable
    OUTPUT_FOLDER = "OUT_FOLDER"  # a folder written into: a folder or nothing there
    STORE = "STORE_FILE"  # the SQLite store: a regular file, or nothing where one can be made


def path_problem(path: Path, wanted: PathKind) -> str | None:
    """Why `path` is not what `wanted` asks for, or None."""
    if wanted is PathKind.FILE:
        return input_problem(path)
    if wanted is PathKind.FOLDER:
        return input_problem(path, files=False, folders=True)
    if wanted is PathKind.FILE_OR_FOLDER:
        return input_problem(path, folders=True)
    if wanted is PathKind.OUTPUT_FOLDER:
        return output_problem(path, folder=True)
    if wanted is PathKind.STORE and kind(path) == "a file":
        return None  # read-only commands read a store they may not write
    return output_problem(path)


def check_path(name: str, path: Path, wanted: PathKind) -> Path:
    """`path` when it is what `wanted` asks for; bad input naming the option otherwise."""
    problem = path_problem(path, wanted)
    if problem is None:
        return path
    if wanted is PathKind.STORE:
        raise InputError(f"cannot use the store {shown(path)} ({name}): it {problem}")
    raise InputError(f"{name} {shown(path)} {problem}")


def option_name(param: typer.CallbackParam) -> str:
    """How the user wrote the option (its longest flag), or the argument's metavar."""
    flags = [flag for flag in getattr(param, "opts", []) if flag.startswith("-")]
    return max(flags, key=len) if flags else (param.name or "argument").upper()


def _path_callback(wanted: PathKind) -> Any:
    def check(param: typer.CallbackParam, value: Any) -> Any:
        if value is None and wanted is PathKind.STORE:  # the default store is checked too
            source = "REPLAY_STORE" if os.environ.get("REPLAY_STORE") else option_name(param)
            check_path(source, default_store(), wanted)
        if value is None:
            return None
        for each in value if isinstance(value, list | tuple) else [value]:
            check_path(option_name(param), Path(each), wanted)
        return value

    return check


def path_option(wanted: PathKind, *flags: str, help: str, **settings: Any) -> Any:
    """A path option checked as `wanted` when the command line is read."""
    return typer.Option(*flags, metavar=wanted.value, callback=_path_callback(wanted),
                        help=help, **settings)


def path_argument(wanted: PathKind, *, help: str, **settings: Any) -> Any:
    """A positional path argument checked as `wanted` when the command line is read."""
    return typer.Argument(metavar=wanted.value, callback=_path_callback(wanted), help=help,
                          **settings)


def number_option(low: float, high: float, *flags: str, help: str, **settings: Any) -> Any:
    """An int or float option from `low` to `high`, both included, checked when read (see
    `range_error` for the line a bad value gives)."""
    return typer.Option(*flags, min=low, max=high, help=help, **settings)


def range_text(param: Any) -> str | None:
    """`an integer from 1 to 10000` for a ranged number option, else None."""
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is None and high is None:
        return None
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    what = "an integer" if annotation is int else "a number"
    if high is None:
        return f"{what} of at least {_number(low)}"
    return f"{what} from {_number(low)} to {_number(high)}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def usage_line(error: Exception) -> str:
    """One line for a usage error typer found: for a number out of its range (or not a
    number, nan, inf) the option and its range; else typer's own message."""
    param = getattr(error, "param", None)
    wanted = range_text(param) if param is not None else None
    if wanted is not None:
        return f"{option_name(param)}: give {wanted}"
    message = error.format_message() if hasattr(error, "format_message") else str(error)
    return " ".join(message.split())
