"""Codex: the history, then its prompt as a final user message. Its carrier keeps recent user
messages (20k tokens) and puts its summary prefix (a part of the synced prompt) before the
summary."""

from __future__ import annotations

from replay.compaction.agents.base import OneCall
from replay.compaction.sources import PromptText
from replay.compaction.tails import recent_users
from replay.core.errors import InputError
from replay.models.types import Message

USER_BUDGET = 20_000


class Codex(OneCall):
    """Codex's context checkpoint compaction."""

    name = source = "codex"

    def native(self, text: str, history: list[Message], prompt: PromptText) -> list[Message]:
        """Recent user messages, then the prefixed summary."""
        prefix = prompt.parts.get("summary-prefix")
        if not prefix:
            raise InputError("the codex prompt has no summary prefix: run `replay prompts sync "
                             "codex --force`")
        return [*recent_users(history, USER_BUDGET),
                {"role": "user", "content": f"{prefix}\n{text}"}]


AGENTS = {"codex": Codex()}
