"""Gemini CLI: its prompt is the system instruction over the history; a second call asks the
model to check its snapshot against the history and returns the refined one (the first when the
second is empty). Its carrier adds a model acknowledgement and keeps the last ~30% of the
history."""

from __future__ import annotations

from replay.compaction.agents.base import Ask, Draft, body, part
from replay.compaction.sources import PromptText
from replay.compaction.tails import kept_tail, tokens
from replay.models.types import Message

ASK = "First, reason in your scratchpad. Then, generate the <state_snapshot>."
CHECK = ("Critically evaluate the <state_snapshot> you just generated against the conversation. "
         "Did you omit any specific technical detail, file path, error message, test result or "
         "open step? Reply with the complete, improved <state_snapshot> only.")
ACK = "Got it. Thanks for the additional context!"


class GeminiCli:
    """Gemini CLI's chat compression, with its verification turn."""

    name = source = "gemini-cli"
    calls = 2

    def write(self, history: list[Message], prompt: PromptText, ask: Ask) -> Draft:
        """The snapshot, then its check."""
        messages = [{"role": "system", "content": part(prompt, "system", "user")},
                    *body(history), {"role": "user", "content": ASK}]
        first = ask(messages)
        messages += [{"role": "assistant", "content": first}, {"role": "user", "content": CHECK}]
        return Draft(self.finish(ask(messages)) or first)

    def finish(self, reply: str) -> str:
        """The reply as it is."""
        return reply

    def native(self, text: str, history: list[Message], prompt: PromptText) -> list[Message]:
        """The summary, the acknowledgement, and the last ~30% of the history."""
        budget = int(0.3 * sum(tokens(m) for m in history))
        return [{"role": "user", "content": text}, {"role": "assistant", "content": ACK},
                *kept_tail(history, budget)]


AGENTS = {"gemini-cli": GeminiCli()}
