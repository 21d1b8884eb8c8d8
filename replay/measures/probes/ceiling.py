"""The study's per-task complete-input ceiling, each context's actual input length, strict
shrinkage against Full, and the input rules a valid H must also meet.

- **Complete input**: every message the answering model is sent for a probe, the context's
  messages and the probe's own message, in Qwen tokens (`fusion.count_tokens`, texts and call
  arguments); a task with several probes counts its longest. Lengths are reported as they
  are, never padded or cut to be equal.
- **The ceiling of a task**: its protected prompts (the history's system and task messages, and
  the probe message), the frozen summary allowance, its five largest whole units, a 64-token
  reserve and 32 framing tokens (the figures of `replay.compaction.fusion.budget`), enlarged
  before answering when needed to fit the serialized S: the complete input of every S-alone
  context of the task (a summary neither fused nor the study's H, as its carrier brings it
  back).
- **Strict shrinkage**: a context is strictly shorter when its complete input has fewer tokens
  than Full's for the same task; counted per arm and cohort over the planned contexts, a
  context that failed (no input) counting as not shorter.
- **A valid H** (the study's `hermes-h`, alone) fits its allowance (`replay.compaction.hermes`),
  and also the task's ceiling, and is strictly shorter than Full; otherwise its context fails
  and scores zero: there is no fallback to the history.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from replay.compaction.fusion import FRAMING, RESERVE, budget, evidence_units, full_tokens
from replay.compaction.hermes import STUDY
from replay.compaction.summarize import parse_summarizer
from replay.measures.probes.answering import FULL, Context, probe_message
from replay.measures.probes.files import ProbeSet
from replay.models.types import Message
from replay.records.history import History

SHRINKAGE_NOTE = ("strictly shorter than Full: contexts whose complete input (the context and "
                  "the probe, in Qwen tokens) has fewer tokens than Full's for the task (a "
                  "failed context does not)")


@dataclass(frozen=True)
class Ceiling:
    """A task's complete-input ceiling and what it is made of; `enlarged` fits its S."""

    prompt_tokens: int
    probe_tokens: int
    allowance: int
    largest_tokens: int
    reserve: int
    framing: int
    full_tokens: int
    enlarged: int = 0

    @property
    def base(self) -> int:
        """The ceiling before it is enlarged for S."""
        return (self.prompt_tokens + self.probe_tokens + self.allowance + self.largest_tokens
                + self.reserve + self.framing)

    @property
    def tokens(self) -> int:
        """The ceiling the task's contexts are held to."""
        return max(self.base, self.enlarged)


def probe_tokens(probes: ProbeSet) -> int:
    """The longest probe message of a task, in Qwen tokens."""
    return max(full_tokens([probe_message(probe)]) for probe in probes.probes)


def complete_input(messages: list[Message], probes: ProbeSet) -> int:
    """A context's complete input: its messages and its longest probe message."""
    return full_tokens(messages) + probe_tokens(probes)


def task_ceiling(history: History, probes: ProbeSet) -> Ceiling:
    """The ceiling of a task before S enlarges it, and Full's complete input."""
    frozen = budget(history.messages, evidence_units(history.messages))
    return Ceiling(frozen.prompt_tokens, probe_tokens(probes), frozen.allowance,
                   frozen.largest_tokens, RESERVE, FRAMING,
                   complete_input(history.messages, probes))


def kind(method: str) -> str:
    """`full`, `s` (a summary alone), `h` (the study's H alone) or `fused`."""
    if method == FULL:
        return "full"
    name = parse_summarizer(method)
    if name.fused is not None:
        return "fused"
    return "h" if name.prompt == STUDY.name else "s"


def measure(contexts: list[Context], histories: dict[str, History],
            probes: dict[str, ProbeSet]) -> tuple[list[Context], dict[str, Ceiling]]:
    """Each context with its complete input and where it stands (`Context.length`), every H
    alone that breaks the input rules failed; and each task's ceiling (enlarged to fit its S
    contexts)."""
    ceilings = {iid: task_ceiling(history, probes[iid]) for iid, history in histories.items()}
    sized = [context if context.messages is None else replace(context, length={
        **context.length, "input_tokens": complete_input(context.messages,
                                                         probes[context.instance_id])})
             for context in contexts]
    for iid, ceiling in ceilings.items():
        fitted = [c.length["input_tokens"] for c in sized if c.instance_id == iid
                  and "input_tokens" in c.length and kind(c.method) == "s"]
        ceilings[iid] = replace(ceiling, enlarged=max(fitted, default=0))
    return [_place(context, ceilings[context.instance_id]) for context in sized], ceilings


def _place(context: Context, ceiling: Ceiling) -> Context:
    tokens = context.length.get("input_tokens")
    placed = replace(context, length={
        **context.length, "ceiling": ceiling.tokens, "full_tokens": ceiling.full_tokens,
        "within_ceiling": tokens is not None and tokens <= ceiling.tokens,
        "shorter_than_full": tokens is not None and tokens < ceiling.full_tokens})
    if tokens is None or kind(context.method) != "h":
        return placed
    if tokens > ceiling.tokens:
        why = f"its complete input, {tokens} tokens, is over the ceiling of {ceiling.tokens}"
    elif tokens >= ceiling.full_tokens:
        why = (f"its complete input, {tokens} tokens, is not shorter than Full's "
               f"{ceiling.full_tokens}")
    else:
        return placed
    # no fallback: the context fails and scores zero
    return replace(placed, messages=None, error=f"summary: invalid: {context.method}: {why}")


@dataclass(frozen=True)
class Shrinkage:
    """One arm on one cohort: contexts strictly shorter than Full, and within the ceiling."""

    method: str
    cohort: str
    contexts: int
    shorter: int
    within_ceiling: int

    def record(self) -> dict[str, Any]:
        """As exported."""
        return asdict(self)


def shrinkage(contexts: list[Context], cohorts: dict[str, str]) -> list[Shrinkage]:
    """Strict shrinkage and ceiling counts per arm (in the order first seen) and cohort."""
    found: dict[tuple[str, str], list[Context]] = {}
    for context in contexts:
        if context.method != FULL:
            found.setdefault((context.method, cohorts[context.instance_id]), []).append(context)
    return [Shrinkage(method, cohort, len(group),
                      sum(bool(c.length.get("shorter_than_full")) for c in group),
                      sum(bool(c.length.get("within_ceiling")) for c in group))
            for (method, cohort), group in found.items()]

