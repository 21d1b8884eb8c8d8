"""SWE-agent trajectories (`<instance_id>.traj`).

    {"trajectory": [{"thought": "...", "action": "grep -n x f.py", "observation": "...",
                     "response": "...", ...}, ...],
     "history": [{"role": "system", "content": "..."}, {"role": "user", ...}, ...],
     "info": {...}, "replay_config": "{... \"problem_statement\": {\"id\": ...}, ...}"}

Each entry of `trajectory` is one step: its action becomes a `bash` tool call with the command as
it was and its observation the tool message. `submit` becomes the `finish` tool (it ends the
run; nothing to execute). The opening messages are the system and task messages at the start of
`history` (demonstrations left out). SWE-agent's own editor commands (`open`, `edit`, `create`,
`goto`, `scroll_*`, `str_replace_editor`) are done as file operations (`editor.py`); other
actions run in a fresh bash in the repository (SWE-agent kept one shell session, so actions that
rely on it differ from their recorded output and are reported). A trajectory that ends with
`submit` carries its `info.submission`, the patch its actions must have made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replay.core.errors import InputError
from replay.histories.importers.editor import is_editor_command
from replay.histories.importers.recorded import (
    Expected,
    Recorded,
    RecordedAction,
    RecordedStep,
    bash_call,
    plain_message,
    tool_call,
)
from replay.models.types import Message

FORMAT = "swe-agent"
NO_OUTPUT = "Your command ran successfully and did not produce any output."


def parse(data: dict[str, Any], path: Path) -> Recorded:
    """Convert a SWE-agent trajectory (see the module docstring)."""
    messages = _opening(data)
    opening = len(messages)
    steps = [_step(entry, number, messages)
             for number, entry in enumerate(data["trajectory"], start=1)]
    config = _replay_config(data)
    instance_id = data.get("instance_id") or config.get("problem_statement", {}).get("id")
    model = config.get("agent", {}).get("model", {}).get("name") or "unknown"
    submitted = bool(steps) and any(a.tool == "finish" for a in steps[-1].actions)
    submission = (data.get("info") or {}).get("submission") if submitted else None
    return Recorded(FORMAT, instance_id, model, messages, opening, steps,
                    submission=submission or None)


def _opening(data: dict[str, Any]) -> list[Message]:
    source = data.get("history") or (data["trajectory"][0].get("query") if data["trajectory"]
                                     else None) or []
    opening = []
    for item in source:
        if item.get("role") == "assistant":
            break
        if item.get("role") in ("system", "user") and not item.get("is_demo"):
            opening.append(plain_message(item))
    if not opening:
        raise InputError("no system or task message before the first step (`history`)")
    return opening


def _replay_config(data: dict[str, Any]) -> dict[str, Any]:
    config = data.get("replay_config") or {}
    if isinstance(config, str):
        config = json.loads(config)
    return config if isinstance(config, dict) else {}


def _step(entry: dict[str, Any], number: int, messages: list[Message]) -> RecordedStep:
    action = str(entry.get("action") or "").strip()
    observation = str(entry.get("observation") or "")
    thought = entry.get("thought") or entry.get("response") or None
    step = RecordedStep(end=0)
    if not action:
        messages += [{"role": "assistant", "content": thought},
                     {"role": "user", "content": observation}]
    else:
        call_id = f"call_{number}"
        submit = action.split()[0] == "submit"
        call = tool_call(call_id, "finish", {}) if submit else bash_call(call_id, action)
        messages += [{"role": "assistant", "content": thought, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": call_id, "content": observation}]
        expected = Expected(None if submit else
                            ("" if observation.strip() == NO_OUTPUT else observation))
        tool = "finish" if submit else "editor" if is_editor_command(action) else "bash"
        step.actions.append(RecordedAction(tool, {} if submit else {"command": action},
                                           expected, len(messages) - 1, raw=tool == "bash"))
    step.end = len(messages)
    return step
