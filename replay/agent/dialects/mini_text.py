"""`mini-swe-agent-text`: mini-swe-agent's text actions.

Each response holds exactly one bash block (```bash, or ```mswea_bash_command from v2); its
observation comes back as a user message; a response with no block or several gets
mini-swe-agent's format error. Imported histories are stored as tool calls: `spoken` turns them
back into the text the agent wrote and read.
"""

from __future__ import annotations

import re
from typing import Any

from replay.agent.dialects.mini_swe_agent import FormatError, MiniSweAgent, command_of
from replay.core.vocab import ActionFormat
from replay.models.types import Message

BLOCK = re.compile(r"```(?:mswea_bash_command|bash)[ \t]*\n(.*?)\n?```", re.S)
FORMAT_ERROR = ("Please always provide EXACTLY ONE action in triple backticks, found {count} "
                "actions.\nIf you have completed your assignment, please consult the first "
                "message about how to submit your solution.")


class MiniText(MiniSweAgent):
    """One bash block per response, observations as user messages."""

    name: str = ActionFormat.MINI_SWE_AGENT_TEXT

    def tools(self) -> list[dict[str, Any]]:
        """No tools: the actions are text."""
        return []

    def commands(self, message: Message) -> list[tuple[str | None, str]]:
        """The response's one bash block; none or several is a format error."""
        found = BLOCK.findall(str(message.get("content") or ""))
        if len(found) != 1:
            raise FormatError({"role": "user",
                               "content": FORMAT_ERROR.format(count=len(found))})
        return [(None, found[0].strip())]

    def spoken(self, messages: list[Message]) -> list[Message]:
        """Each `bash` call back into its response as a block (the fence the history's prompt
        names), each tool message as the user message it was."""
        fence = "mswea_bash_command" if any(
            "mswea_bash_command" in str(m.get("content") or "") for m in messages[:2]) else "bash"
        result: list[Message] = []
        for message in messages:
            calls = message.get("tool_calls") or []
            if message.get("role") == "assistant" and calls:
                blocks = "\n\n".join(f"```{fence}\n{command_of(call)}\n```" for call in calls)
                text = str(message.get("content") or "").strip()
                result.append({"role": "assistant",
                               "content": f"{text}\n\n{blocks}" if text else blocks})
            elif message.get("role") == "tool":
                result.append({"role": "user", "content": message.get("content")})
            else:
                result.append(dict(message))
        return result


DIALECT = MiniText()
