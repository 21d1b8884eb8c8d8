"""A fourth agent dialect, defined outside replay as a user would add one: `json-actions`.

Each response's content is one JSON object: `{"command": "..."}` runs a command, whose exit code
and output come back as a user message; `{"done": true}` ends the work. A POST keeps the
history's opening, as mini-swe-agent's dialects do.
"""

from __future__ import annotations

import json
import time
from typing import Any

from replay.agent import dialects
from replay.agent.dialects.base import Opening
from replay.environments.base import Environment
from replay.models.types import Message
from replay.records.trace import Action, Turn

NOT_JSON = 'Reply with one JSON object: {"command": "..."} or {"done": true}.'


class JsonActions:
    """The test-only dialect."""

    name = "json-actions"

    def tools(self) -> list[dict[str, Any]]:
        """No tools: actions are JSON text."""
        return []

    def spoken(self, messages: list[Message]) -> list[Message]:
        """The messages as they are (copies)."""
        return [dict(message) for message in messages]

    def act(self, env: Environment, step: int, message: Message, timeout: float) -> Turn:
        """Run the command, or finish, or ask again for JSON."""
        try:
            action = json.loads(str(message.get("content") or ""))
        except json.JSONDecodeError:
            action = None
        if not isinstance(action, dict) or not ("command" in action or action.get("done")):
            return Turn([{"role": "user", "content": NOT_JSON}])
        if action.get("done"):
            return Turn([], finished=True)
        started = time.monotonic()
        result = env.exec(str(action["command"]), timeout=timeout)
        return Turn([{"role": "user", "content": f"exit {result.exit_code}\n{result.output}"}],
                    [Action(step, "bash", {"command": action["command"]}, result.output,
                            result.exit_code, time.monotonic() - started)])

    def opening(self, history: list[Message], problem_statement: str,
                workdir: str) -> Opening:
        """The history's messages before its first response."""
        first = next((i for i, m in enumerate(history) if m.get("role") == "assistant"),
                     len(history))
        return Opening([dict(message) for message in history[:first]])


JSON_ACTIONS = dialects.register(JsonActions())
