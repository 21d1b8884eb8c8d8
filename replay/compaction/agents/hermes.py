"""Hermes agent: its own compressor code builds one user message from the serialized history,
sent without tools, as Hermes sends none. Two settings share its synced prompt `hermes`: Hermes'
own budget (`replay.compaction.hermes`, read out of the synced code), and `hermes-h`, the
study's budgeted H, run by Hermes' real class in its own venv (`hermes_native`), whose summary
is invalid (its details' `invalid`) and scores zero when it does not fit its allowance in three
attempts. Its carrier puts Hermes' SUMMARY_PREFIX before the body and its end marker after it."""

from __future__ import annotations

from replay.compaction import hermes, hermes_native
from replay.compaction.agents.base import Ask, Draft
from replay.compaction.sources import PromptText
from replay.models.types import Message


class Hermes:
    """Hermes' context compressor in one of its settings."""

    source = "hermes"

    def __init__(self, setting: hermes.Setting) -> None:
        self.setting = setting
        self.name = setting.name
        self.calls = setting.attempts

    def write(self, history: list[Message], prompt: PromptText, ask: Ask) -> Draft:
        """Each attempt a fresh single-message request, without tools; the last body is kept,
        marked `invalid` when it is still over the allowance (the method's own failure)."""
        def call(text: str) -> str:
            return ask([{"role": "user", "content": text}], tools=[])

        if self.setting.frozen:  # the study's H: Hermes' real class, in its own venv
            result = hermes_native.compact(history, self.setting, call)
        else:
            result = hermes.compact(hermes.load_code(prompt), history, self.setting, call)
        return Draft(hermes.carried(result.attempts[-1].body), result.details(self.setting))

    def finish(self, reply: str) -> str:
        """The reply, stripped: its body is cut out by Hermes' own helper, which needs the synced
        code, so `write` does that."""
        return reply.strip()

    def native(self, text: str, history: list[Message], prompt: PromptText) -> list[Message]:
        """The summary between Hermes' prefix and end marker."""
        return [{"role": "user", "content": hermes.native_text(prompt, text)}]


AGENTS = {setting.name: Hermes(setting) for setting in (hermes.NATIVE, hermes.STUDY)}
