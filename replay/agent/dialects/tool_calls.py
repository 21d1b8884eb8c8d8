"""`tool-calls`: replay's own tools (`bash`, `read_file`, `write_file`, `edit_file`, `finish`).

A response with no tool call gets a reminder; `finish` ends the run. A POST keeps replay's own
system prompt (`prompts/agent/`) and its task message, which the summary-only hand-over joins.
"""

from __future__ import annotations

import time
from typing import Any

from replay.agent.dialects.base import Opening
from replay.agent.loop import task_messages
from replay.agent.tools import TOOLS, ToolError, parse_arguments, run_tool
from replay.core.vocab import ActionFormat, ExitReason
from replay.environments.base import Environment
from replay.models.types import Message
from replay.records.trace import Action, Trace

NO_TOOL_CALL = ("Your response called no tool. Call a tool to continue, or `finish` when the "
                "fix is complete.")


class ToolCalls:
    """Replay's tool calls, as the history stores them."""

    name: str = ActionFormat.TOOL_CALLS

    def tools(self) -> list[dict[str, Any]]:
        """All of replay's tools."""
        return TOOLS

    def spoken(self, messages: list[Message]) -> list[Message]:
        """The messages as they are (copies)."""
        return [dict(message) for message in messages]

    def act(self, env: Environment, trace: Trace, message: Message, timeout: float) -> None:
        """Run each tool call in order; a successful `finish` ends the run."""
        calls = message.get("tool_calls") or []
        if not calls:
            trace.messages.append({"role": "user", "content": NO_TOOL_CALL})
            return
        for call in calls:
            name = call.get("function", {}).get("name", "")
            output = _run(env, trace, timeout, name, call.get("function", {}).get("arguments"))
            trace.messages.append({"role": "tool", "tool_call_id": call.get("id", ""),
                                   "content": output})
            if name == "finish" and not trace.actions[-1].error:
                trace.exit_reason = ExitReason.FINISHED

    def opening(self, history: list[Message], problem_statement: str,
                workdir: str) -> Opening:
        """Replay's system prompt, and the task message for the hand-over to join."""
        system, task = task_messages(problem_statement, workdir)
        return Opening([system], str(task["content"]))


def _run(env: Environment, trace: Trace, timeout: float, name: str, raw: Any) -> str:
    started = time.monotonic()
    arguments: dict[str, Any] = {}
    try:
        arguments = parse_arguments(raw)
        observation = run_tool(env, name, arguments, timeout)
    except ToolError as exc:
        trace.actions.append(Action(trace.steps, name, arguments, str(exc), 1,
                                    time.monotonic() - started, error=True))
        return f"error: {exc}"
    if observation.edited and observation.edited not in trace.files_edited:
        trace.files_edited.append(observation.edited)
    if observation.read:
        trace.files_read.append(observation.read)
    trace.actions.append(Action(trace.steps, name, arguments, observation.output,
                                observation.exit_code, time.monotonic() - started))
    return observation.output


DIALECT = ToolCalls()
