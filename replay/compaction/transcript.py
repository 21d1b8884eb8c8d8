"""A history as readable text: the transcript summarizers read and the mechanical baselines cut.

Messages are OpenAI chat-format dicts: `system`, `user`, `assistant` (optionally with
`tool_calls`), and `tool` messages answering a call by its `tool_call_id`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay.models.types import Message


def message_text(message: Message) -> str:
    """A message's content as text: a string as is; content parts' texts joined by newlines."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    pieces = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            pieces.append(str(part.get("text", "")))
        else:
            kind = part.get("type", "part") if isinstance(part, dict) else "part"
            pieces.append(f"[{kind}]")
    return "\n".join(pieces)


def tool_calls(message: Message) -> list[dict[str, Any]]:
    """An assistant message's tool calls (an empty list for any other message)."""
    return list(message.get("tool_calls") or []) if message.get("role") == "assistant" else []


def call_name(call: dict[str, Any]) -> str:
    """The function name of one tool call."""
    return str((call.get("function") or {}).get("name") or "tool")


def call_arguments(call: dict[str, Any]) -> str:
    """The JSON arguments string of one tool call, as the model wrote it."""
    arguments = (call.get("function") or {}).get("arguments")
    return arguments if isinstance(arguments, str) else ""


def tool_names(messages: Sequence[Message]) -> dict[str, str]:
    """Tool name by tool call id, from the assistant messages' calls."""
    return {
        str(call.get("id")): call_name(call)
        for message in messages
        for call in tool_calls(message)
        if call.get("id")
    }


def tool_name(message: Message, names: dict[str, str]) -> str:
    """The tool that produced a tool message: its own `name`, else its call's, else `tool`."""
    return str(message.get("name") or names.get(str(message.get("tool_call_id")), "tool"))


def serialize_history(messages: Sequence[Message]) -> str:
    """A transcript: one block per message, headed `[index] role`, blocks separated by a blank line.

    Tool calls follow their assistant message's text as `-> call NAME (id): ARGUMENTS`; a tool
    message is headed `[index] tool NAME (id)`.
    """
    names = tool_names(messages)
    blocks = []
    for index, message in enumerate(messages):
        role = str(message.get("role", "unknown"))
        if role == "tool":
            head = f"[{index}] tool {tool_name(message, names)} ({message.get('tool_call_id', '')})"
        else:
            head = f"[{index}] {role}"
        lines = [head]
        text = message_text(message)
        if text:
            lines.append(text)
        for call in tool_calls(message):
            lines.append(
                f"-> call {call_name(call)} ({call.get('id', '')}): {call_arguments(call)}"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + ("\n" if blocks else "")
