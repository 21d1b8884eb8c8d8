"""`tool-calls`: replay's own tools (`bash`, `read_file`, `write_file`, `edit_file`, `finish`).

A response with no tool call gets a reminder; `finish` ends the run. A POST keeps replay's own
system prompt (`prompts/agent/`) and its task message, which the summary-only hand-over joins.
"""

from __future__ import annotations

import time
from typing import Any

from replay.agent.dialects.base import Opening
from replay.agent.loop import task_messages
from replay.agent.tools import TOOLS, Observation, ToolError, parse_arguments, run_tool
from replay.core.vocab import ActionFormat
from replay.environments.base import Environment
from replay.models.types import Message
from replay.records.trace import Action, Turn

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

    def act(self, env: Environment, step: int, message: Message, timeout: float) -> Turn:
        """Run each tool call in order; a successful `finish` ends the run."""
        calls = message.get("tool_calls") or []
        if not calls:
            return Turn([{"role": "user", "content": NO_TOOL_CALL}])
        messages, actions, edited, read = [], [], [], []
        finished = False
        for call in calls:
            name = call.get("function", {}).get("name", "")
            output, action, observation = _run(env, step, timeout, name,
                                               call.get("function", {}).get("arguments"))
            actions.append(action)
            if observation is not None and observation.edited:
                edited.append(observation.edited)
            if observation is not None and observation.read:
                read.append(observation.read)
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""),
                             "content": output})
            finished = finished or (name == "finish" and not action.error)
        return Turn(messages, actions, edited, read, finished)

    def opening(self, history: list[Message], problem_statement: str,
                workdir: str) -> Opening:
        """Replay's system prompt, and the task message for the hand-over to join."""
        system, task = task_messages(problem_statement, workdir)
        return Opening([system], str(task["content"]))


def _run(env: Environment, step: int, timeout: float, name: str,
         raw: Any) -> tuple[str, Action, Observation | None]:
    """What one tool call shows the agent, its action, and its observation (None when the call
    was bad)."""
    started = time.monotonic()
    arguments: dict[str, Any] = {}
    try:
        arguments = parse_arguments(raw)
        observation = run_tool(env, name, arguments, timeout)
    except ToolError as exc:
        return f"error: {exc}", Action(step, name, arguments, str(exc), 1,
                                       time.monotonic() - started, error=True), None
    return observation.output, Action(step, name, arguments, observation.output,
                                      observation.exit_code,
                                      time.monotonic() - started), observation


DIALECT = ToolCalls()
