"""Identifiers that name files and folders: instance ids, run names, history ids.

Each becomes part of a path (an environment's folder, an artifact's, a report's), so each is
held to a safe character set where it enters (a suite, a dataset row, an option): letters,
digits, `.`, `_` and `-`, starting with a letter or a digit, at most `MAX_LENGTH` characters.
No such name is `.` or `..` or holds a `/`, so none can lead a path out of its folder.
"""

from __future__ import annotations

import re

from replay.core.errors import InputError

MAX_LENGTH = 200
SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
RULE = ("only letters, digits, '.', '_' and '-', starting with a letter or a digit, at most "
        f"{MAX_LENGTH} characters")
HISTORY_ID = re.compile(r"[0-9a-f]{1,64}")


def unsafe(value: str) -> bool:
    """Whether `value` may not name a file or a folder (see the module docstring)."""
    return len(value) > MAX_LENGTH or SAFE.fullmatch(value) is None


def safe_name(kind: str, value: str) -> str:
    """`value` when it is a safe name; bad input naming `kind` (e.g. "run name") otherwise."""
    if unsafe(value):
        raise InputError(f"bad {kind} {value!r}: it names files and folders, so {RULE}")
    return value


def history_id(value: str) -> str:
    """A history's content id or a prefix of it: lowercase hexadecimal; bad input otherwise."""
    if HISTORY_ID.fullmatch(value) is None:
        raise InputError(f"bad history id {value!r}: a history's id (or a prefix of it) is "
                         "lowercase hexadecimal, as `replay collect` and `replay import` print it")
    return value


# Characters that move the cursor, end a line or start an escape sequence on a terminal: C0 and
# C1 controls, DEL, the Unicode line and paragraph separators, and the bidirectional overrides.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def has_control(text: str) -> bool:
    """Whether `text` holds a character that `shown` escapes."""
    return _CONTROLS.search(text) is not None


def shown(text: object) -> str:
    """`text` as it may reach a terminal: every control character (newline, escape, ...)
    written as its Python escape (`\\n`, `\\x1b`), so that a name that comes from an input
    (an instance id, a file name, a dataset's field) can neither forge a line nor drive the
    terminal. The one place where names from inputs are made printable."""
    return _CONTROLS.sub(lambda found: repr(found.group())[1:-1], str(text))
