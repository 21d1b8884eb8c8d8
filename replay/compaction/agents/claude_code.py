"""Claude Code: the history, then its prompt as a final user message; the reply drops
`<analysis>` and turns `<summary>` into "Summary:". Its carrier keeps no raw message: one user
message opens with its "continued from a previous conversation" wrapper."""

from __future__ import annotations

import re

from replay.compaction.agents.base import OneCall
from replay.compaction.sources import PromptText
from replay.models.types import Message

WRAPPER = ("This session is being continued from a previous conversation that ran out of "
           "context. The conversation is summarized below:\n")


class ClaudeCode(OneCall):
    """Claude Code's full-conversation compaction."""

    name = source = "claude-code"

    def finish(self, reply: str) -> str:
        """Drop `<analysis>`, turn `<summary>` into "Summary:"."""
        return claude_code_summary(reply)

    def native(self, text: str, history: list[Message], prompt: PromptText) -> list[Message]:
        """The wrapper and the summary, nothing else of the history."""
        return [{"role": "user", "content": WRAPPER + text}]


def claude_code_summary(text: str) -> str:
    """Claude Code's post-processing: drop `<analysis>`, turn `<summary>` into "Summary:"."""
    text = re.sub(r"<analysis>.*?</analysis>", "", text, flags=re.S)
    match = re.search(r"<summary>(.*?)</summary>", text, flags=re.S)
    if match:
        text = text[:match.start()] + "Summary:\n" + match.group(1).strip() + text[match.end():]
    return re.sub(r"\n\n+", "\n\n", text).strip()


AGENTS = {"claude-code": ClaudeCode()}
