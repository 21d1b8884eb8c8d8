"""Fusion compaction, `S+top:N`: a summary S plus the N tool outputs most relevant to the task.

- **Units** are the history's tool outputs (every `tool` message), in source order, each rendered
  whole under a header naming its call: `[output 3: bash cat -n build/build.log]`.
- **The evidence judge** is one model request holding only the task (the history's first user
  message) and the rendered units, never a summary or a probe. It scores every unit from 0 to 10
  and is asked at temperature 0 and sample 0, so its scores are computed once per history and
  judge, and every N shares them (the model call cache answers the repeats). A unit the reply
  does not score gets 0; ties keep source order.
- **Budgets** (in Qwen tokens, `replay.compaction.qwen_tokens`, as the study counts them): the
  summary's allowance is 20% of the rendered evidence tokens, clamped to 64-256, frozen per
  history; a longer summary keeps its head up to the allowance. The input ceiling of a history
  fits its prompts (system and task messages), the allowance, its five largest units, a
  64-token reserve and 32 framing tokens. The N best-ranked units are taken whole, never
  truncated; one that would leave less than the reserve under the ceiling is skipped and
  reported. A history with fewer units than N keeps them all and reports how many it had.
- **Rendering**: the summary, then the chosen units in source order.

Every figure is kept in `Fusion.details`, with the fused size against the full history's, so a
fused context that is not strictly shorter than Full is known as such.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from replay.compaction import qwen_tokens
from replay.compaction.transcript import call_arguments, call_name, message_text, tool_calls
from replay.models.types import ChatRequest, Message, Model
from replay.records.reply import ChatResponse

FUSION_VERSION = 2  # part of a fused summary's identity: bump when rendering or budgets change
# (2: budgets in Qwen tokens)
ALLOWANCE_SHARE = 5  # the allowance is 1/5 (20%) of the rendered evidence tokens
ALLOWANCE_RANGE = (64, 256)
LARGEST_UNITS = 5
RESERVE = 64
FRAMING = 32
BRIEF_CHARS = 160
JUDGE_SEED = 0
SUMMARY_FRAME = "Summary of the earlier work:"
EVIDENCE_FRAME = ("Tool outputs kept verbatim from that work, in their original order "
                  "({kept} of {total}):")
JUDGE_SYSTEM = ("You rate evidence for a software task. You see the task and the numbered tool "
                "outputs of an earlier session on it, and judge how much each output matters "
                "for carrying the task on.")
JUDGE_ASK = ("Rate every output from 0 (irrelevant) to 10 (essential to the task). Reply with "
             'JSON only, one score per output number: {"scores": {"1": <score>, "2": <score>}}')
FENCE = re.compile(r"```[a-zA-Z]*\n(.*?)\n?```", re.S)


def count_tokens(text: str) -> int:
    """Tokens of `text`: Qwen tokens (`replay.compaction.qwen_tokens`)."""
    return qwen_tokens.count(text)


def head(text: str, tokens: int) -> str:
    """The first `tokens` tokens of `text` (all of it when it has no more)."""
    return qwen_tokens.head(text, tokens)


@dataclass(frozen=True)
class Unit:
    """One tool output of the history: its 1-based position in source order and its header."""

    position: int
    message: int
    header: str
    text: str

    @property
    def rendered(self) -> str:
        return f"{self.header}\n{self.text}"

    @property
    def tokens(self) -> int:
        return count_tokens(self.rendered)


def evidence_units(history: list[Message]) -> list[Unit]:
    """Every tool output of the history, in source order."""
    calls = {str(call.get("id")): call for message in history for call in tool_calls(message)}
    units = []
    for index, message in enumerate(history):
        if message.get("role") != "tool":
            continue
        position = len(units) + 1
        call = calls.get(str(message.get("tool_call_id")))
        units.append(Unit(position, index, _header(position, message, call),
                          message_text(message)))
    return units


def _header(position: int, message: Message, call: dict[str, Any] | None) -> str:
    tool = call_name(call) if call else str(message.get("name") or "tool")
    try:
        arguments = json.loads(call_arguments(call)) if call else {}
    except ValueError:
        arguments = {}
    brief = ""
    if isinstance(arguments, dict):
        brief = str(arguments.get("command") or arguments.get("path") or "").split("\n")[0]
    if len(brief) > BRIEF_CHARS:
        brief = brief[:BRIEF_CHARS] + "..."
    return f"[output {position}: {tool} {brief}]".replace(" ]", "]")


@dataclass(frozen=True)
class FusionBudget:
    """A history's frozen budgets (see the module docstring)."""

    evidence_tokens: int
    allowance: int
    prompt_tokens: int
    largest_tokens: int
    ceiling: int


def opening(history: list[Message]) -> list[Message]:
    """The history's prompts: its messages before the first assistant message."""
    first = next((i for i, m in enumerate(history) if m.get("role") == "assistant"),
                 len(history))
    return history[:first]


def budget(history: list[Message], units: list[Unit]) -> FusionBudget:
    """The allowance and the input ceiling of a history."""
    evidence = sum(unit.tokens for unit in units)
    low, high = ALLOWANCE_RANGE
    allowance = min(high, max(low, evidence // ALLOWANCE_SHARE))
    prompts = sum(count_tokens(message_text(m)) for m in opening(history))
    largest = sum(sorted((unit.tokens for unit in units), reverse=True)[:LARGEST_UNITS])
    return FusionBudget(evidence, allowance, prompts, largest,
                  prompts + allowance + largest + RESERVE + FRAMING)


def full_tokens(history: list[Message]) -> int:
    """Tokens of the whole history: every message's text and every call's arguments."""
    return sum(count_tokens(message_text(m))
               + sum(count_tokens(call_arguments(c)) for c in tool_calls(m)) for m in history)


def task_text(history: list[Message]) -> str:
    """The task as the history poses it: its first user message."""
    return next((message_text(m) for m in history if m.get("role") == "user"), "")


def judge_request(task: str, units: list[Unit]) -> ChatRequest:
    """The one request that scores every unit: the task and the units, nothing else."""
    evidence = "\n\n".join(unit.rendered for unit in units)
    ask = f"Task:\n{task}\n\nTool outputs:\n\n{evidence}\n\n{JUDGE_ASK}"
    return ChatRequest(messages=[{"role": "system", "content": JUDGE_SYSTEM},
                                 {"role": "user", "content": ask}], temperature=0.0)


def reply_object(text: str) -> dict[str, Any] | None:
    """The JSON object a reply consists of (one enclosing ``` fence allowed), else None."""
    text = text.strip()
    fenced = FENCE.fullmatch(text)
    try:
        value = json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_scores(text: str, count: int) -> tuple[list[float], int]:
    """Scores of units 1..count from the judge's reply, and how many it left unscored (0)."""
    found = reply_object(text) or {}
    given = found.get("scores") if isinstance(found.get("scores"), dict) else {}
    scores, unscored = [], 0
    for position in range(1, count + 1):
        value = given.get(str(position))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            scores.append(float(value))
        else:
            scores.append(0.0)
            unscored += 1
    return scores, unscored


def ranking(scores: list[float]) -> list[int]:
    """Unit indices, best score first; ties in source order."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


@dataclass
class Fusion:
    """A fused text, what it reports, and the judge's call (None when there was no unit)."""

    text: str
    details: dict[str, Any]
    judge_request: ChatRequest | None = None
    judge_response: ChatResponse | None = None


def fuse(history: list[Message], summary: str, top: int, judge: Model) -> Fusion:
    """Fuse `summary` with the `top` units `judge` ranks most relevant (see the docstring)."""
    units = evidence_units(history)
    frozen = budget(history, units)
    fusion = Fusion("", {})
    scores: list[float] = []
    unscored = 0
    if units:
        fusion.judge_request = judge_request(task_text(history), units)
        fusion.judge_response = judge.complete(fusion.judge_request, seed_index=JUDGE_SEED)
        content = fusion.judge_response.message.get("content")
        scores, unscored = parse_scores(content if isinstance(content, str) else "", len(units))
    kept_summary = head(summary, frozen.allowance)
    framing = count_tokens(SUMMARY_FRAME) + count_tokens(EVIDENCE_FRAME)
    room = frozen.ceiling - RESERVE - frozen.prompt_tokens - framing - count_tokens(kept_summary)
    picked, skipped = choose(units, ranking(scores)[:top], room)
    fusion.text = render(kept_summary, picked, len(units))
    fusion.details = {
        "top": top, "units_available": len(units), "units_kept": [u.position for u in picked],
        "units_skipped_for_ceiling": skipped, "scores": scores, "judge_unscored": unscored,
        "unit_tokens": [u.tokens for u in picked], "summary_tokens": count_tokens(summary),
        "summary_kept_tokens": count_tokens(kept_summary), "framing_tokens": framing,
        "evidence_tokens": frozen.evidence_tokens, "allowance": frozen.allowance,
        "prompt_tokens": frozen.prompt_tokens, "ceiling": frozen.ceiling,
        "fused_tokens": frozen.prompt_tokens + count_tokens(fusion.text),
        "full_tokens": full_tokens(history)}
    fusion.details["shorter_than_full"] = (fusion.details["fused_tokens"]
                                           < fusion.details["full_tokens"])
    return fusion


def choose(units: list[Unit], ranked: list[int], room: int) -> tuple[list[Unit], list[int]]:
    """The ranked units that fit `room` tokens whole, in source order, and the positions of
    those skipped because they did not."""
    chosen, skipped = [], []
    for index in ranked:
        if units[index].tokens <= room:
            chosen.append(index)
            room -= units[index].tokens
        else:
            skipped.append(units[index].position)
    return [units[i] for i in sorted(chosen)], skipped


def render(summary: str, units: list[Unit], total: int) -> str:
    """The fused text: the summary, then `units` (already in source order) whole."""
    parts = [f"{SUMMARY_FRAME}\n{summary}",
             EVIDENCE_FRAME.format(kept=len(units), total=total),
             *(unit.rendered for unit in units)]
    return "\n\n".join(parts)
