"""Carriers: how a summary re-enters the agent's context for POST.

- `summary-only` (the study's POST): the agent's instructions and one hand-over of the summary
  (`prompts/agent/compacted.md`: the words replay's own resume message ends with); nothing of
  the history is kept.
- `native`: the wrapper and kept tail of the agent whose prompt wrote the summary, as that agent
  does it (`replay.compaction.agents`: each agent's `native`).

A POST speaks the dialect of its history (`History.dialect`, as PRE does), so it keeps what
taught the history's agent that dialect (its `Opening`, `replay.agent.dialects`). For replay's
`tool-calls` that is replay's own system prompt (`prompts/agent/`), and the summary-only
hand-over joins its task message: the issue, then the summary. For mini-swe-agent's dialects it
is the history's own opening, the messages before its first response, verbatim (the system
message that asks for exactly one bash block, and the task message with the issue and the submit
sentinel), and the hand-over is a user message of its own. A native carrier keeps the opening's
kept messages, then what the agent keeps (a message of the opening is not repeated).
"""

from __future__ import annotations

from replay.agent import dialects
from replay.agent.loop import load_prompt
from replay.compaction import agents
from replay.compaction.sources import PromptText
from replay.core.errors import InputError
from replay.core.paths import TESTBED
from replay.core.vocab import ActionFormat, Carrier
from replay.models.types import Message
from replay.records.history import History
from replay.records.summary import Summary

CARRIERS = tuple(Carrier)


def compacted(summary: str) -> str:
    """What tells a resumed agent that `summary` replaces its earlier work."""
    return load_prompt("compacted").format(summary=summary)


def start_messages(history: History, problem_statement: str, summary: Summary | None,
                   carrier: str, prompt: PromptText | None) -> list[Message]:
    """What a continuation starts from: the full history (PRE), or the summary as `carrier`
    hands it over (POST, `post_messages`)."""
    if summary is None:
        return history.messages
    return post_messages(summary, history.messages, problem_statement, TESTBED, carrier, prompt,
                         history.dialect)


def post_messages(summary: Summary, history: list[Message], problem_statement: str,
                  workdir: str, carrier: str = Carrier.SUMMARY_ONLY,
                  prompt: PromptText | None = None,
                  dialect: str = ActionFormat.TOOL_CALLS) -> list[Message]:
    """The messages a POST continuation starts from (`prompt`: the one that wrote the summary;
    `dialect`: the history's, whose instructions are kept, see the module docstring)."""
    if carrier not in CARRIERS:
        raise InputError(f"unknown carrier {carrier!r}: use {' or '.join(CARRIERS)}")
    if summary.messages is not None:
        return summary.messages
    kept, handover = None, None
    if carrier == Carrier.NATIVE and prompt is not None:
        kept = agents.agent(prompt.name).native(summary.text, history, prompt)
    else:
        handover = compacted(summary.text)
    opening = dialects.dialect(dialect).opening(history, problem_statement, workdir)
    return opening.before(kept) if handover is None else opening.handing_over(handover)
