"""Kimi Code: the history, then its prompt as a final user message. Its carrier keeps the last
two user/assistant messages and wraps the summary in its `<system>` note."""

from __future__ import annotations

from replay.compaction.agents.base import OneCall
from replay.compaction.sources import PromptText
from replay.models.types import Message

WRAPPER = "<system>Previous context has been compacted. Here is the compaction output:</system>"


class KimiCode(OneCall):
    """Kimi Code's compaction."""

    name = source = "kimi-code"

    def native(self, text: str, history: list[Message], prompt: PromptText) -> list[Message]:
        """The last two plain user/assistant messages, then the wrapped summary."""
        last_two = [m for m in history if m.get("role") in ("user", "assistant")
                    and not m.get("tool_calls")][-2:]
        return [*last_two, {"role": "user", "content": f"{WRAPPER}\n{text}"}]


AGENTS = {"kimi-code": KimiCode()}
