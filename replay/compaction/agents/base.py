"""What every production compaction agent provides, and the one-call shape most of them share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from replay.compaction.sources import PromptText
from replay.core.errors import InputError
from replay.models.types import Message


class Ask(Protocol):
    """One call of the summarizer's model: its messages (and tools, None for the agent's own),
    the reply's text back. The caller keeps each request and what it cost."""

    def __call__(self, messages: list[Message],
                 tools: list[dict[str, Any]] | None = None) -> str: ...


@dataclass(frozen=True)
class Draft:
    """What an agent's compaction wrote: the summary text and what it reports about it."""

    text: str
    details: dict[str, Any] = field(default_factory=dict)


class CompactionAgent(Protocol):
    """One production compaction agent.

    `name` is the prompt part of a summarizer name (`MODEL:NAME`); `source` the synced prompt
    it sends (`prompts/sources.toml`); `calls` the most model calls one summary takes.
    """

    name: str
    source: str
    calls: int

    def write(self, history: list[Message], prompt: PromptText, ask: Ask) -> Draft:
        """Summarize `history` by sending `prompt` the way the agent does."""
        ...

    def finish(self, reply: str) -> str:
        """The agent's post-processing: the summary text its last call's reply becomes."""
        ...

    def native(self, text: str, history: list[Message], prompt: PromptText) -> list[Message]:
        """The agent's own carrier: the messages it continues from after its instructions."""
        ...


class OneCall:
    """An agent that sends the history then its prompt as a final user message, once, and
    strips the reply; `messages` and `finish` are what the others change."""

    name = ""
    source = ""
    calls = 1

    def messages(self, history: list[Message], prompt: PromptText) -> list[Message]:
        """The history as it is, then the prompt's text as a user message."""
        return [*history, {"role": "user", "content": part(prompt, "user", "system")}]

    def write(self, history: list[Message], prompt: PromptText, ask: Ask) -> Draft:
        """One call; its reply post-processed."""
        return Draft(self.finish(ask(self.messages(history, prompt))))

    def finish(self, reply: str) -> str:
        """The reply, stripped."""
        return reply.strip()


def part(prompt: PromptText, *roles: str) -> str:
    """The prompt's text for the first of `roles` it has; none is bad input."""
    for role in roles:
        if prompt.parts.get(role):
            return prompt.parts[role]
    raise InputError(f"prompt {prompt.name} has no {' or '.join(roles)} text")


def body(history: list[Message]) -> list[Message]:
    """The history without its system messages."""
    return [message for message in history if message.get("role") != "system"]
