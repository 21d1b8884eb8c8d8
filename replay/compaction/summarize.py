"""Summarizers: a backbone model with a production compaction prompt, or a mechanical baseline.

A summarizer is named `BACKBONE:PROMPT` (a model alias or ad-hoc spec, then a prompt name such as
`claude-code`), or by a mechanical name: `anchor_index`, `observation-masking`, `tail:N`; or
`S+top:N[@JUDGE]`, a summary S fused with the N tool outputs an evidence judge model ranks most
relevant to the task (`replay.compaction.fusion`; the judge defaults to S's backbone).

Each production prompt is used the way its agent uses it, as far as REFERENCE.md records it:
- claude-code, codex, kimi-code: the history as it is, then the prompt as a final user message;
  Claude Code's reply drops `<analysis>` and turns `<summary>` into "Summary:".
- gemini-cli: the prompt is the system instruction over the history; a second call asks the
  model to check its snapshot against the history and returns the refined one.
- opencode: its system text replaces the agent's system prompt; its user template ends the history.
- hermes, hermes-h: Hermes' own compressor code builds one user message from the serialized
  history (`replay.compaction.hermes`); hermes-h is the study's budgeted H, whose summary scores
  zero when it does not fit its allowance in three attempts.
The agent's tool schemas go with every request so that the history's tool calls stay valid,
with tool_choice "none": a summary is text, whatever tool_choice the model's spec sets for the
agent. Each request asks for at most `SUMMARY_MAX_TOKENS` (a model's own `max_tokens` setting
wins); a reply cut off there (`finish_reason` length) marks the summary `truncated`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from replay.agent.tools import TOOLS
from replay.compaction import hermes
from replay.compaction.fusion import fuse
from replay.compaction.mechanical import anchor_index, observation_masking, tail
from replay.compaction.sources import PromptText
from replay.core.errors import InputError
from replay.models.types import ChatRequest, Message, Model
from replay.records.summary import Summary

MECHANICAL = ("anchor_index", "observation-masking", "tail")
PROMPT_NAMES = ("claude-code", "codex", "gemini-cli", "opencode", "kimi-code", *hermes.SETTINGS)
MASKING_KEEP_LAST = 2
GEMINI_ASK = "First, reason in your scratchpad. Then, generate the <state_snapshot>."
GEMINI_CHECK = ("Critically evaluate the <state_snapshot> you just generated against the "
                "conversation. Did you omit any specific technical detail, file path, error "
                "message, test result or open step? Reply with the complete, improved "
                "<state_snapshot> only.")
# The summarizers' output cap: the longest template of the five prompts (Claude Code's nine
# sections) is written in well under 4,000 tokens by the models of the study; twice that leaves
# room, while a model that rambles (SmolLM2 filled its 8k context twice, 400 s each) is stopped.
SUMMARY_MAX_TOKENS = 8192
CUT_OFF = ("length", "max_tokens")  # finish reasons of a reply stopped by its output cap
FUSED = re.compile(r"(?P<base>.+?)\+top:(?P<top>\d+)(?:@(?P<judge>.+))?")


@dataclass(frozen=True)
class SummarizerName:
    """A parsed summarizer name."""

    name: str
    backbone: str | None = None
    prompt: str | None = None
    tail_tokens: int | None = None
    fused: Fused | None = None

    @property
    def mechanical(self) -> bool:
        """Whether no backbone writes the summary (a fused one may still call its judge)."""
        return self.backbone is None

    @property
    def source_prompt(self) -> str | None:
        """The production prompt the summary text comes from (a fused summary's base's); both
        Hermes settings use the one `hermes` prompt."""
        prompt = self.fused.base.prompt if self.fused is not None else self.prompt
        return "hermes" if prompt in hermes.SETTINGS else prompt


@dataclass(frozen=True)
class Fused:
    """`S+top:N@JUDGE`: the summary S, how many units N, and the evidence judge's model."""

    base: SummarizerName
    top: int
    judge: str


def parse_summarizer(text: str) -> SummarizerName:
    """Parse `BACKBONE:PROMPT`, `anchor_index`, `observation-masking`, `tail:N` or
    `S+top:N[@JUDGE]`."""
    text = text.strip()
    if match := FUSED.fullmatch(text):
        return _parse_fused(text, match)
    if text in ("anchor_index", "observation-masking"):
        return SummarizerName(text)
    if match := re.fullmatch(r"tail:(\d+)", text):
        if int(match.group(1)) == 0:
            raise InputError(f"summarizer {text!r}: tail:N keeps the last N tokens of the "
                             "history, so N must be at least 1")
        return SummarizerName(text, tail_tokens=int(match.group(1)))
    backbone, _, prompt = text.rpartition(":")
    if not backbone or prompt not in PROMPT_NAMES:
        raise InputError(f"unknown summarizer {text!r}: use MODEL:PROMPT with PROMPT one of "
                         f"{', '.join(PROMPT_NAMES)}, or anchor_index, observation-masking, tail:N")
    return SummarizerName(text, backbone=backbone, prompt=prompt)


def _parse_fused(text: str, match: re.Match[str]) -> SummarizerName:
    base = parse_summarizer(match["base"])
    top = int(match["top"])
    if top < 1:
        raise InputError(f"summarizer {text!r}: top:N needs N >= 1")
    if base.name == "observation-masking" or base.fused is not None:
        raise InputError(f"summarizer {text!r}: {base.name} is not a summary text that can be "
                         "fused (observation-masking keeps messages; a fused one is fused)")
    judge = match["judge"] or base.backbone
    if not judge:
        raise InputError(f"summarizer {text!r}: {base.name} calls no model, so name the "
                         f"evidence judge: {text}@MODEL")
    return SummarizerName(text, backbone=base.backbone, fused=Fused(base, top, judge))


def summarize(history: list[Message], name: SummarizerName, prompt: PromptText | None = None,
              model: Model | None = None, seed_index: int = 0,
              judge: Model | None = None, temperature: float = 0.0) -> Summary:
    """Summarize a Phase A history with a mechanical baseline or a model and a prompt.

    The model is asked at `temperature` (a sweep's is its plan's). A fused name summarizes with
    its base first, then fuses the evidence `judge` ranks (the backbone `model` when no judge is
    given).
    """
    if name.fused is not None:
        return _fused_summary(history, name.name, name.fused, prompt, model, seed_index,
                              judge or model, temperature)
    if name.name == "anchor_index":
        return Summary(name.name, anchor_index(history))
    if name.name == "observation-masking":
        kept = observation_masking(history, keep_last=MASKING_KEEP_LAST)
        return Summary(name.name, "", messages=kept)
    if name.tail_tokens is not None:
        return Summary(name.name, tail(history, tokens=name.tail_tokens))
    if prompt is None or model is None:
        raise InputError(f"summarizer {name.name} needs a model and a synced prompt")
    return _model_summary(history, name, prompt, model, seed_index, temperature)


def _fused_summary(history: list[Message], name: str, fused: Fused, prompt: PromptText | None,
                   model: Model | None, seed_index: int, judge: Model | None,
                   temperature: float) -> Summary:
    if judge is None:
        raise InputError(f"summarizer {name} needs its evidence judge model")
    base = summarize(history, fused.base, prompt, model, seed_index, temperature=temperature)
    fusion = fuse(history, base.text, fused.top, judge)
    summary = Summary(name, fusion.text, requests=list(base.requests),
                      input_tokens=base.input_tokens, output_tokens=base.output_tokens,
                      cost=base.cost, details={**base.details, **fusion.details})
    if fusion.judge_request is not None and fusion.judge_response is not None:
        summary.requests.append(fusion.judge_request)
        summary.input_tokens += fusion.judge_response.usage.input_tokens
        summary.output_tokens += fusion.judge_response.usage.output_tokens
        summary.cost += fusion.judge_response.cost
    return summary


def _model_summary(history: list[Message], name: SummarizerName, prompt: PromptText,
                   model: Model, seed_index: int, temperature: float) -> Summary:
    summary = Summary(name.name, "")
    ask = (seed_index, temperature)
    if name.prompt in hermes.SETTINGS:
        return _hermes_summary(history, name.prompt, prompt, model, summary, ask)
    body = [m for m in history if m.get("role") != "system"]
    if name.prompt == "gemini-cli":
        messages = [{"role": "system", "content": _part(prompt, "system", "user")}, *body,
                    {"role": "user", "content": GEMINI_ASK}]
        first = _call(model, messages, summary, *ask)
        messages += [{"role": "assistant", "content": first},
                     {"role": "user", "content": GEMINI_CHECK}]
        summary.text = _call(model, messages, summary, *ask) or first
        return summary
    if name.prompt == "opencode":
        messages = [{"role": "system", "content": _part(prompt, "system")}, *body,
                    {"role": "user", "content": _part(prompt, "user")}]
    else:
        messages = [*history, {"role": "user", "content": _part(prompt, "user", "system")}]
    text = _call(model, messages, summary, *ask)
    summary.text = claude_code_summary(text) if name.prompt == "claude-code" else text.strip()
    return summary


def _hermes_summary(history: list[Message], setting: str, prompt: PromptText, model: Model,
                    summary: Summary, ask: tuple[int, float]) -> Summary:
    """H: each attempt is a fresh single-message request, without tools (Hermes sends none)."""
    chosen = hermes.setting(setting)

    def call(text: str) -> str:
        return _call(model, [{"role": "user", "content": text}], summary, *ask, tools=[])

    result = hermes.compact(hermes.load_code(prompt), history, chosen, call)
    summary.details = result.details(chosen)
    if not result.valid:
        raise hermes.OverBudget(f"{summary.summarizer}: {result.attempts[-1].tokens} tokens after "
                                f"{len(result.attempts)} attempts, over the allowance of "
                                f"{result.allowance}")
    summary.text = hermes.carried(result.attempts[-1].body)
    return summary


def _part(prompt: PromptText, *roles: str) -> str:
    for role in roles:
        if prompt.parts.get(role):
            return prompt.parts[role]
    raise InputError(f"prompt {prompt.name} has no {' or '.join(roles)} text")


def _call(model: Model, messages: list[Message], summary: Summary, seed_index: int,
          temperature: float, tools: list[dict[str, Any]] | None = None) -> str:
    request = ChatRequest(messages=messages, tools=TOOLS if tools is None else tools,
                          temperature=temperature, max_tokens=SUMMARY_MAX_TOKENS,
                          tool_choice="none")
    response = model.complete(request, seed_index=seed_index)
    if response.finish_reason in CUT_OFF:
        summary.details["truncated"] = True
    summary.requests.append(request)
    summary.input_tokens += response.usage.input_tokens
    summary.output_tokens += response.usage.output_tokens
    summary.cost += response.cost
    content = response.message.get("content")
    return content if isinstance(content, str) else ""


def claude_code_summary(text: str) -> str:
    """Claude Code's post-processing: drop `<analysis>`, turn `<summary>` into "Summary:"."""
    text = re.sub(r"<analysis>.*?</analysis>", "", text, flags=re.S)
    match = re.search(r"<summary>(.*?)</summary>", text, flags=re.S)
    if match:
        text = text[:match.start()] + "Summary:\n" + match.group(1).strip() + text[match.end():]
    return re.sub(r"\n\n+", "\n\n", text).strip()
