"""A sixth compaction agent, defined outside replay as a user would add one: `recap`.

It sends its prompt's user text with the history's last exchange folded into one user message,
cuts its reply at the `RECAP:` marker, and carries the summary back after a `[recap]` line.
"""

from __future__ import annotations

from replay.compaction import agents
from replay.compaction.agents.base import Ask, Draft, part
from replay.compaction.sources import PromptText
from replay.models.types import Message

MARKER = "RECAP:"


class Recap:
    """The test-only agent."""

    name = source = "recap"
    calls = 1

    def write(self, history: list[Message], prompt: PromptText, ask: Ask) -> Draft:
        """One call without tools, the history's length in the request."""
        text = f"{part(prompt, 'user')}\n\n({len(history)} messages so far)"
        return Draft(self.finish(ask([*history, {"role": "user", "content": text}], tools=[])),
                     {"recap": True})

    def finish(self, reply: str) -> str:
        """What follows the marker, stripped."""
        return reply.partition(MARKER)[2].strip() or reply.strip()

    def native(self, text: str, history: list[Message], prompt: PromptText) -> list[Message]:
        """The summary after a `[recap]` line, and the history's last user message."""
        last = [m for m in history if m.get("role") == "user"][-1:]
        return [*last, {"role": "user", "content": f"[recap]\n{text}"}]


RECAP = agents.register(Recap())
