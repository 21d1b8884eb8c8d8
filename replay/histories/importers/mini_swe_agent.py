"""mini-swe-agent trajectories (`<instance_id>.traj.json`).

    {"trajectory_format": "mini-swe-agent-1.1", "instance_id": "...",
     "info": {"config": {"model": {"model_name": "..."}}, ...},
     "messages": [{"role": "system", ...}, {"role": "user", ...}, {"role": "assistant", ...}]}

Text mode (the default agent): an assistant message holds one bash block (```bash or
```mswea_bash_command; version 2 also lists it in `extra.actions`) and the next user message its
observation, `<returncode>N</returncode>` and `<output>...</output>`. A response without exactly
one block was not executed (the next user message is a format error). The submission (a command
echoing COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT) ends the run; its observation is its output without
that first line. Tool-call mode: `bash` tool calls and `tool` messages. Each action becomes a
`bash` tool call with its command as it was (the block leaves the text), its observation the tool
message, as it was recorded. Files written before v1.4 carry neither `trajectory_format` nor
`info.mini_version`, and may be the bare list of messages; they read the same.

The dialect the agent spoke is kept (text actions or `bash` tool calls, both ending with the
submit sentinel), so a continuation speaks it too; a file that ends with its submission keeps the
submitted patch, which executing its actions must reproduce.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from replay.histories.importers.recorded import (
    Expected,
    Recorded,
    RecordedAction,
    RecordedStep,
    bash_call,
    call_arguments,
    plain_message,
    split_observation,
    text_of,
)
from replay.models.types import Message

FORMAT = "mini-swe-agent"
BLOCK = re.compile(r"```(?:mswea_bash_command|bash)[ \t]*\n(.*?)\n?```", re.S)
ROLES = ("system", "user", "assistant", "tool")
SUBMIT = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")


def parse(data: dict[str, Any] | list[Any], path: Path) -> Recorded:
    """Convert a mini-swe-agent trajectory (see the module docstring)."""
    data = {"messages": data} if isinstance(data, list) else data
    source = [message for message in data["messages"] if message.get("role") in ROLES]
    messages: list[Message] = []
    steps: list[RecordedStep] = []
    index = 0
    while index < len(source) and source[index]["role"] != "assistant":
        messages.append(plain_message(source[index]))
        index += 1
    opening = len(messages)
    while index < len(source):
        step, index = _step(source, index, messages, len(steps) + 1)
        steps.append(step)
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    model = (config.get("model") or {}).get("model_name") or ""
    tools = any(message.get("tool_calls") for message in source)
    return Recorded(FORMAT, data.get("instance_id"), model or "unknown", messages, opening,
                    steps, submission=_submission(steps, info),
                    dialect="mini-swe-agent-tools" if tools else "mini-swe-agent-text")


def _submission(steps: list[RecordedStep], info: dict[str, Any]) -> str | None:
    """The submitted patch when the last action is the submission, else None."""
    last = steps[-1].actions if steps else []
    command = str(last[-1].arguments.get("command", "")) if last else ""
    if not any(marker in command for marker in SUBMIT):
        return None
    recorded = last[-1].expected.text or ""
    return str(info.get("submission") or recorded.partition("\n")[2]) or None


def _step(source: list[dict[str, Any]], index: int, messages: list[Message],
          number: int) -> tuple[RecordedStep, int]:
    """Convert the assistant message at `index` and what follows it up to the next one."""
    message = source[index]
    usage = ((message.get("extra") or {}).get("response") or {}).get("usage") or {}
    tokens = usage.get("prompt_tokens")
    step = RecordedStep(end=0, input_tokens=tokens if isinstance(tokens, int) else None)
    after = _until_assistant(source, index + 1)
    if message.get("tool_calls"):
        rest = _tool_mode(message, after, messages, step)
    else:
        rest = _text_mode(message, after, messages, step, number)
    messages.extend(plain_message(item) for item in rest)
    step.end = len(messages)
    return step, index + 1 + len(after)


def _until_assistant(source: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    end = start
    while end < len(source) and source[end]["role"] != "assistant":
        end += 1
    return source[start:end]


def _tool_mode(message: dict[str, Any], rest: list[dict[str, Any]], messages: list[Message],
               step: RecordedStep) -> list[dict[str, Any]]:
    """Convert a tool-call response and its tool messages; return the other messages after it."""
    converted = plain_message(message)
    messages.append(converted)
    outputs = {item.get("tool_call_id"): item for item in rest if item["role"] == "tool"}
    for call in converted["tool_calls"]:
        item = outputs.get(call["id"])
        content = text_of(item.get("content")) if item else ""
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        expected = split_observation(content) if item else Expected(None)
        step.actions.append(RecordedAction(call["function"]["name"], call_arguments(call),
                                           expected, len(messages) - 1))
    return [item for item in rest if item["role"] != "tool"]


def _text_mode(message: dict[str, Any], rest: list[dict[str, Any]], messages: list[Message],
               step: RecordedStep, number: int) -> list[dict[str, Any]]:
    """Convert a text-mode response; return the messages after it still to append."""
    text = text_of(message.get("content"))
    listed = (message.get("extra") or {}).get("actions")
    commands = [action.get("command", "") for action in listed] if listed else BLOCK.findall(text)
    if len(commands) != 1:
        messages.append(plain_message(message))
        return rest
    call_id, command = f"call_{number}", commands[0].strip()
    thought = BLOCK.sub("", text).strip()
    messages.append({"role": "assistant", "content": thought or None,
                     "tool_calls": [bash_call(call_id, command)]})
    observation = rest[0] if rest and rest[0]["role"] == "user" else None
    content = text_of(observation["content"]) if observation else ""
    messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
    step.actions.append(RecordedAction("bash", {"command": command},
                                       _expected(command, content, observation is not None),
                                       len(messages) - 1))
    return rest[1:] if observation else rest


def _expected(command: str, content: str, recorded: bool) -> Expected:
    """The recorded output of a text-mode action. A submission is recorded without its first
    line (the marker the agent echoed) and without a return code."""
    if not recorded:
        return Expected(None)
    marker = next((word for word in SUBMIT if word in command), None)
    if marker and "<returncode>" not in content:
        return Expected(f"{marker}\n{content}")
    return split_observation(content)
