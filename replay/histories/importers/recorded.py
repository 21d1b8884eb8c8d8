"""A trajectory read from a file, in the project's history format, with what each action printed.

Every importer turns its format into a `Recorded`: OpenAI chat messages with tool calls (bash
actions written in text become `bash` tool calls, commands as they were, observations as they
were), the steps (one per model response), and per action the output the file recorded, which
the import compares with what executing the action prints.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from replay.models.types import Message

_OURS = re.compile(r"\Aexit code: (-?\d+)\n(?:\[timed out after \d+ s\]\n)?")
_SUFFIX = re.compile(r"\A(.*?)\s*\[exit code (-?\d+)\]\s*\Z", re.S)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_TAG = "<{0}>\n?(.*?)\n?</{0}>"


@dataclass(frozen=True)
class Expected:
    """A recorded output. `text` None: nothing recorded. `tail` set: the recorder cut the
    middle out, `text` is the head."""

    text: str | None
    exit_code: int | None = None
    tail: str | None = None


@dataclass
class RecordedAction:
    """One tool call. `raw`: compare the command's own output and exit code (bash actions);
    otherwise the tool's observation text. `message_index`: the tool message of its output."""

    tool: str
    arguments: dict[str, Any]
    expected: Expected
    message_index: int
    raw: bool = True

    def describe(self) -> str:
        """A short name of the action for reports."""
        if self.tool == "bash":
            line = str(self.arguments.get("command", "")).strip().splitlines() or [""]
            text = line[0] + (" ..." if len(line) > 1 else "")
            return f"`{text[:70]}`"
        path = self.arguments.get("path")
        return f"{self.tool} {path}" if path else self.tool


@dataclass
class RecordedStep:
    """One model response: its actions, where its messages end, its request's tokens if known."""

    end: int
    actions: list[RecordedAction] = field(default_factory=list)
    input_tokens: int | None = None


@dataclass
class Recorded:
    """A whole trajectory read from a file.

    `submission`: the patch the agent submitted when the file ends with its submission (what
    executing its actions must have changed); `dialect`: how the agent spoke (see
    `replay.agent.dialects`), which its continuation speaks too.
    """

    format: str
    instance_id: str | None
    model: str
    messages: list[Message]
    opening: int
    steps: list[RecordedStep]
    submission: str | None = None
    dialect: str = "tool-calls"


def bash_call(call_id: str, command: str) -> dict[str, Any]:
    """An OpenAI tool call of the `bash` tool."""
    return tool_call(call_id, "bash", {"command": command})


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI tool call with JSON-encoded arguments."""
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}


def plain_message(message: dict[str, Any]) -> Message:
    """The chat fields of a message (role, content, tool calls); a format's extras dropped."""
    kept: Message = {"role": message["role"], "content": message.get("content")}
    if message.get("tool_calls"):
        kept["tool_calls"] = [_plain_call(call, index)
                              for index, call in enumerate(message["tool_calls"], start=1)]
    if message.get("tool_call_id") is not None:
        kept["tool_call_id"] = message["tool_call_id"]
    return kept


def _plain_call(call: dict[str, Any], index: int) -> dict[str, Any]:
    function = call["function"]
    arguments = function.get("arguments") or {}
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call.get("id") or f"call_{index}", "type": "function",
            "function": {"name": function["name"], "arguments": arguments}}


def call_arguments(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments as an object ({} when they are not a JSON object)."""
    raw = call["function"].get("arguments")
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def text_of(content: Any) -> str:
    """The text of a message's content (a string, or a list of text parts)."""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def split_observation(text: str) -> Expected:
    """A recorded command observation as output + exit code, in the wrappers agents use:
    replay's `exit code: N` line, mini-swe-agent's `<returncode>`/`<output>` tags (or
    `<output_head>`/`<output_tail>` when cut), a trailing `[exit code N]`; else the text as is."""
    ours = _OURS.match(text)
    if ours:
        return Expected(text[ours.end():], int(ours.group(1)))
    code = _RETURNCODE.search(text)
    if code:
        exit_code = int(code.group(1))
        output = re.search(_TAG.format("output"), text, re.S)
        if output:
            return Expected(output.group(1), exit_code)
        head = re.search(_TAG.format("output_head"), text, re.S)
        tail = re.search(_TAG.format("output_tail"), text, re.S)
        if head and tail:
            return Expected(head.group(1), exit_code, tail.group(1))
        return Expected(text[code.end():], exit_code)
    suffix = _SUFFIX.match(text)
    if suffix:
        return Expected(suffix.group(1), int(suffix.group(2)))
    return Expected(text)
