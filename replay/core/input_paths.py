"""What is wrong with a path a user gave, before anything reads or writes it.

An input is a regular file, or a folder where a folder is expected: a FIFO, a device or a socket
is refused (reading a FIFO blocks for ever). An output is checked for what would make writing
it fail at the end, after the work: a folder where a file is written, a file where a folder is,
a parent that is a file, or a parent this process may not write.

Each function returns the problem as a phrase ("is a FIFO", "does not exist"), or None.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a file"))


def kind(path: Path) -> str | None:
    """What is at `path` ("a file", "a folder", "a FIFO", ...), following links; None when
    nothing is (a dangling link included)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def input_problem(path: Path, *, files: bool = True, folders: bool = False) -> str | None:
    """Why `path` cannot be read as an input: a regular file (with `files`) or a folder (with
    `folders`), readable."""
    found = kind(path)
    if found is None:
        return "does not exist"
    if not ((files and found == "a file") or (folders and found == "a folder")):
        wanted = " or ".join(name for name, yes in (("a file", files), ("a folder", folders))
                             if yes)
        return f"is {found}: give {wanted}"
    if not os.access(path, os.R_OK | (os.X_OK if found == "a folder" else 0)):
        return "cannot be read (permission denied)"
    return None


def _parent_problem(path: Path) -> str | None:
    """Why the folders above `path` cannot be made or written: the nearest one that exists must
    be a folder this process may write."""
    for parent in Path(os.path.abspath(path)).parents:
        found = kind(parent)
        if found is None:
            continue
        if found != "a folder":
            return f"cannot be made: {parent} is {found}"
        if not os.access(parent, os.W_OK | os.X_OK):
            return f"cannot be written: {parent} is not writable"
        return None
    return None


def output_problem(path: Path, *, folder: bool = False) -> str | None:
    """Why `path` cannot be written as an output file (or, with `folder`, a folder of outputs):
    what is there must be of that kind and writable, or the folders above it must allow making
    it."""
    found = kind(path)
    if found is None:
        return _parent_problem(path)
    wanted = "a folder" if folder else "a file"
    if found != wanted:
        return f"is {found}: give {wanted}"
    if not os.access(path, os.W_OK | (os.X_OK if folder else 0)):
        return "is not writable"
    return None


def regular_files(found: Iterable[Path]) -> list[Path]:
    """The files a folder's search found, sorted, folders left out; bad input for a FIFO, a
    socket or a device among them (reading one would block or never end)."""
    from replay.core.errors import InputError
    from replay.core.names import shown

    files = []
    for path in sorted(found):
        what = kind(path)
        if what == "a file":
            files.append(path)
        elif what not in ("a folder", None):
            raise InputError(f"{shown(path)} is {what}: give a file")
    return files


def checked_output_folder(path: Path, what: str) -> Path:
    """`path` when outputs can be written into it (see `output_problem`); bad input naming
    `what` (e.g. "the exports folder") otherwise."""
    from replay.core.errors import InputError
    from replay.core.names import shown

    problem = output_problem(path, folder=True)
    if problem is not None:
        raise InputError(f"{what} {shown(path)} {problem}")
    return path
