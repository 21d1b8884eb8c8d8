"""Dialects: the agent's action formats, one class each, registered by name.

A dialect says how the agent's responses become commands and when its work is done, and what a
POST keeps of the instructions that taught the agent to act (its `Opening`). A continuation
speaks the dialect its history was written in (`History.dialect`), as PRE does.

- `tool-calls` (`tool_calls.py`): replay's tools; `finish` ends the run.
- `mini-swe-agent-text` (`mini_text.py`): mini-swe-agent's text actions, one bash block per
  response, ending at its submit sentinel.
- `mini-swe-agent-tools` (`mini_tools.py`): mini-swe-agent v2's `bash` tool calls, same sentinel.

The built-in ones are imported when first asked for (`BUILTIN` maps each name to its module);
`register` adds one from elsewhere, so a fourth dialect is one new file.
"""

from __future__ import annotations

from importlib import import_module

from replay.agent.dialects.base import Dialect
from replay.core.errors import InputError
from replay.core.vocab import ActionFormat

BUILTIN = {ActionFormat.TOOL_CALLS: "tool_calls", ActionFormat.MINI_SWE_AGENT_TEXT: "mini_text",
           ActionFormat.MINI_SWE_AGENT_TOOLS: "mini_tools"}
_ADDED: dict[str, Dialect] = {}


def register(dialect: Dialect) -> Dialect:
    """Add a dialect under its name (one not built in); returns it."""
    if dialect.name in BUILTIN:
        raise InputError(f"dialect {dialect.name!r} is built in")
    _ADDED[dialect.name] = dialect
    return dialect


def names() -> tuple[str, ...]:
    """Every dialect's name, the built-in ones first."""
    return (*BUILTIN, *_ADDED)


def dialect(name: str) -> Dialect:
    """The dialect named `name`; an unknown name is bad input."""
    if name in _ADDED:
        return _ADDED[name]
    if name not in BUILTIN:
        raise InputError(f"unknown agent dialect {name!r}: use {', '.join(names())}")
    found: Dialect = import_module(f"{__name__}.{BUILTIN[name]}").DIALECT
    return found
