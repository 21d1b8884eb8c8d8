"""opencode: its system text replaces the agent's system prompt; its user template ends the
history. Its carrier asks "What did we do so far?", answers with the summary and keeps recent
turns (a quarter of the history, 2k to 15k tokens)."""

from __future__ import annotations

from replay.compaction.agents.base import OneCall, body, part
from replay.compaction.sources import PromptText
from replay.compaction.tails import kept_tail, tokens
from replay.models.types import Message

BUDGET = 15_000


class Opencode(OneCall):
    """opencode's summarization agent."""

    name = source = "opencode"

    def messages(self, history: list[Message], prompt: PromptText) -> list[Message]:
        """Its system text, the history without the agent's system prompt, its user template."""
        return [{"role": "system", "content": part(prompt, "system")}, *body(history),
                {"role": "user", "content": part(prompt, "user")}]

    def native(self, text: str, history: list[Message], prompt: PromptText) -> list[Message]:
        """The question, the summary as its answer, and the kept tail."""
        budget = min(BUDGET, max(2_000, sum(tokens(m) for m in history) // 4))
        return [{"role": "user", "content": "What did we do so far?"},
                {"role": "assistant", "content": text}, *kept_tail(history, budget)]


AGENTS = {"opencode": Opencode()}
