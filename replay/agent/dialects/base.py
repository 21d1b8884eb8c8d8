"""What every dialect provides (`Dialect`) and what a POST keeps of its instructions (`Opening`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from replay.environments.base import Environment
from replay.models.types import Message
from replay.records.trace import Turn


@dataclass(frozen=True)
class Opening:
    """The instructions a continuation from a summary keeps: the `kept` messages, and `task`, the
    text of the task message that a summary's hand-over joins (None: the hand-over is a user
    message of its own after `kept`)."""

    kept: list[Message]
    task: str | None = None

    def handing_over(self, handover: str) -> list[Message]:
        """The kept messages and a summary's `handover`, joined to the task message when the
        opening has one, else a user message of its own (the summary-only carrier)."""
        content = handover if self.task is None else f"{self.task}\n{handover}"
        return [*self.kept, {"role": "user", "content": content}]

    def before(self, messages: list[Message]) -> list[Message]:
        """The kept messages, then `messages` (what a native carrier keeps) without the ones
        the opening already holds."""
        return [*self.kept, *(message for message in messages if message not in self.kept)]


class Dialect(Protocol):
    """One action format of the agent."""

    name: str

    def tools(self) -> list[dict[str, Any]]:
        """The tool schemas offered with each request (none for text actions)."""
        ...

    def spoken(self, messages: list[Message]) -> list[Message]:
        """Stored messages (tool calls) as this dialect's agent wrote and read them."""
        ...

    def act(self, env: Environment, step: int, message: Message, timeout: float) -> Turn:
        """Run the actions of response `message` (of step `step`) in `env`: what they did and
        what they showed the agent, and whether it has submitted."""
        ...

    def opening(self, history: list[Message], problem_statement: str,
                workdir: str) -> Opening:
        """What a continuation from a summary of `history` keeps of the agent's instructions."""
        ...
