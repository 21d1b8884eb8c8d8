"""Plain OpenAI chat message lists with an instance id.

    {"instance_id": "replay-demo__tally-1", "model": "gpt-4.1",
     "messages": [{"role": "system", ...}, {"role": "user", ...},
                  {"role": "assistant", "content": "...", "tool_calls": [...]},
                  {"role": "tool", "tool_call_id": "...", "content": "..."}, ...]}

or the bare list of messages with `--instance`. Each assistant message is one step; its tool calls
stay as they were. `bash` calls are compared by their command's output and exit code (the tool
message may wrap them as replay does, `exit code: N` on the first line); replay's other tools
(`read_file`, `write_file`, `edit_file`, `finish`) by their observation. Calls of tools replay
does not have cannot run here, and are reported as divergences.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replay.core.errors import InputError
from replay.histories.importers.recorded import (
    Expected,
    Recorded,
    RecordedAction,
    RecordedStep,
    call_arguments,
    plain_message,
    split_observation,
    text_of,
)
from replay.models.types import Message

FORMAT = "openai"


def parse(data: dict[str, Any] | list[Any], path: Path) -> Recorded:
    """Convert an OpenAI message list (see the module docstring)."""
    source = data if isinstance(data, list) else data["messages"]
    meta = data if isinstance(data, dict) else {}
    messages: list[Message] = []
    starts: list[int] = []
    for item in source:
        if item["role"] not in ("system", "user", "assistant", "tool"):
            raise InputError(f"message {len(messages) + 1} has unknown role {item['role']!r}")
        if item["role"] == "assistant":
            starts.append(len(messages))
        messages.append(plain_message(item))
    ends = [*starts[1:], len(messages)]
    steps = [RecordedStep(end, _actions(messages, start, end))
             for start, end in zip(starts, ends, strict=True)]
    opening = starts[0] if starts else len(messages)
    return Recorded(FORMAT, meta.get("instance_id"), meta.get("model") or "unknown", messages,
                    opening, steps)


def _actions(messages: list[Message], start: int, end: int) -> list[RecordedAction]:
    """The tool calls of the assistant message at `start`, with their tool messages."""
    outputs = {messages[i].get("tool_call_id"): i for i in range(start + 1, end)
               if messages[i]["role"] == "tool"}
    actions = []
    for call in messages[start].get("tool_calls") or []:
        where = outputs.get(call["id"])
        if where is None:
            raise InputError(f"tool call {call['id']} (message {start + 1}) has no tool message")
        text = text_of(messages[where]["content"])
        name = call["function"]["name"]
        expected = split_observation(text) if name == "bash" else Expected(text)
        actions.append(RecordedAction(name, call_arguments(call), expected, where,
                                      raw=name == "bash"))
    return actions
