"""`mini-swe-agent-tools`: mini-swe-agent v2's `bash` tool calls, observations as tool messages.

A response that calls no tool gets mini-swe-agent's tool-call error.
"""

from __future__ import annotations

from typing import Any

from replay.agent.dialects.mini_swe_agent import FormatError, MiniSweAgent, command_of
from replay.agent.tools import TOOLS
from replay.core.vocab import ActionFormat
from replay.models.types import Message

NO_BASH_CALL = ("Tool call error: every response needs to call the `bash` tool at least once. "
                "If you have completed your assignment, please consult the first message about "
                "how to submit your solution.")


class MiniTools(MiniSweAgent):
    """`bash` tool calls only."""

    name: str = ActionFormat.MINI_SWE_AGENT_TOOLS

    def tools(self) -> list[dict[str, Any]]:
        """Replay's `bash` tool alone."""
        return [tool for tool in TOOLS if tool["function"]["name"] == "bash"]

    def commands(self, message: Message) -> list[tuple[str | None, str]]:
        """Every tool call's command, in order; no call is a format error."""
        pairs = [(call.get("id", ""), command_of(call)) for call in message.get("tool_calls") or []]
        if not pairs:
            raise FormatError({"role": "user", "content": NO_BASH_CALL})
        return pairs

    def spoken(self, messages: list[Message]) -> list[Message]:
        """The messages as they are (copies)."""
        return [dict(message) for message in messages]


DIALECT = MiniTools()
