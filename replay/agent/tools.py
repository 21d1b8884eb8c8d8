"""The continuation agent's tools: their schemas and how each runs in an environment."""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Any

from replay.environments.base import Environment

BASH_OUTPUT_LIMIT = 10_000
READ_LINE_LIMIT = 2_000


def _tool(name: str, description: str, properties: dict[str, Any],
          required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required}}}


_TEXT = {"type": "string"}
_LINE = {"type": "integer", "minimum": 1}

TOOLS = [
    _tool("bash", "Run one bash command in the repository (stateless; no network).",
          {"command": _TEXT}, ["command"]),
    _tool("read_file", "Show a file with line numbers, optionally lines start_line..end_line.",
          {"path": _TEXT, "start_line": _LINE, "end_line": _LINE}, ["path"]),
    _tool("write_file", "Create or replace a whole file.", {"path": _TEXT, "content": _TEXT},
          ["path", "content"]),
    _tool("edit_file", "Replace one exact string, which must occur exactly once in the file.",
          {"path": _TEXT, "old": _TEXT, "new": _TEXT}, ["path", "old", "new"]),
    _tool("finish", "End the work: the fix is complete.", {"summary": _TEXT}, []),
]
TOOL_NAMES = {tool["function"]["name"] for tool in TOOLS}


class ToolError(Exception):
    """A tool call the agent got wrong; its message becomes the observation."""


@dataclass(frozen=True)
class Observation:
    """What a tool call produced: the text the model sees and the command's exit code."""

    output: str
    exit_code: int = 0
    edited: str | None = None
    read: str | None = None


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Decode a tool call's JSON arguments; malformed ones are the agent's error."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ToolError(f"arguments are not valid JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise ToolError("arguments must be a JSON object")
    return value


def _require(arguments: dict[str, Any], name: str, kind: type) -> Any:
    value = arguments.get(name)
    if not isinstance(value, kind):
        raise ToolError(f"argument {name!r} is required and must be a {kind.__name__}")
    return value


def absolute(env: Environment, path: str) -> str:
    """A path inside the environment, relative paths taken from the working directory."""
    return posixpath.normpath(posixpath.join(env.workdir, path))


def run_tool(env: Environment, name: str, arguments: dict[str, Any],
             command_timeout: float) -> Observation:
    """Run one tool call. Raises `ToolError` for a call the agent got wrong."""
    if name == "bash":
        return _bash(env, _require(arguments, "command", str), command_timeout)
    if name == "read_file":
        return _read(env, _require(arguments, "path", str), arguments.get("start_line"),
                     arguments.get("end_line"))
    if name == "write_file":
        path = absolute(env, _require(arguments, "path", str))
        _write(env, path, _require(arguments, "content", str))
        return Observation(f"wrote {path}", edited=path)
    if name == "edit_file":
        return _edit(env, _require(arguments, "path", str), _require(arguments, "old", str),
                     _require(arguments, "new", str))
    if name == "finish":
        return Observation("finished")
    raise ToolError(f"unknown tool {name!r}; use one of {', '.join(sorted(TOOL_NAMES))}")


def _bash(env: Environment, command: str, timeout: float) -> Observation:
    result = env.exec(command, timeout=timeout, output_limit=BASH_OUTPUT_LIMIT)
    note = f"\n[timed out after {timeout:.0f} s]" if result.timed_out else ""
    return Observation(f"exit code: {result.exit_code}{note}\n{result.output}", result.exit_code)


def _text(env: Environment, path: str) -> str:
    try:
        return env.read_file(path).decode("utf-8", "replace")
    except (FileNotFoundError, IsADirectoryError):
        raise ToolError(f"no such file: {path}") from None


def _write(env: Environment, path: str, content: str) -> None:
    try:
        env.write_file(path, content.encode())
    except (PermissionError, IsADirectoryError) as exc:
        raise ToolError(f"cannot write {path}: {exc}") from None


def _read(env: Environment, path: str, start: Any, end: Any) -> Observation:
    path = absolute(env, path)
    lines = _text(env, path).splitlines()
    first = start if isinstance(start, int) and start > 0 else 1
    last = end if isinstance(end, int) and end >= first else len(lines)
    last = min(last, first + READ_LINE_LIMIT - 1, len(lines))
    shown = "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(first, last + 1))
    more = f"\n[{len(lines) - last} more lines]" if last < len(lines) else ""
    return Observation(shown + more, read=path)


def _edit(env: Environment, path: str, old: str, new: str) -> Observation:
    path = absolute(env, path)
    text = _text(env, path)
    count = text.count(old) if old else 0
    if count != 1:
        found = "not found" if count == 0 else f"found {count} times; include more context"
        raise ToolError(f"edit_file: the old string was {found} in {path}")
    _write(env, path, text.replace(old, new, 1))
    return Observation(f"edited {path}", edited=path)
