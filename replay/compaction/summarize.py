"""Summarizers: a backbone model with a production compaction prompt, or a mechanical baseline.

A summarizer is named `BACKBONE:PROMPT` (a model alias or ad-hoc spec, then a prompt name such as
`claude-code`), or by a mechanical name: `anchor_index`, `observation-masking`, `tail:N`; or
`S+top:N[@JUDGE]`, a summary S fused with the N tool outputs an evidence judge model ranks most
relevant to the task (`replay.compaction.fusion`; the judge defaults to S's backbone).

Each production prompt is sent the way its agent sends it (`replay.compaction.agents`, one class
per agent, chosen once by the name's prompt part). The agent's tool schemas go with every request
so that the history's tool calls stay valid, with tool_choice "none": a summary is text,
whatever tool_choice the model's spec sets for the agent. Each request asks for at most
`SUMMARY_MAX_TOKENS` (a model's own `max_tokens` setting wins); a reply cut off there
(`finish_reason` length) marks the summary `truncated`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from replay.agent.tools import TOOLS
from replay.compaction import agents
from replay.compaction.agents.base import CompactionAgent
from replay.compaction.fusion import fuse
from replay.compaction.mechanical import anchor_index, observation_masking, tail
from replay.compaction.sources import PromptText
from replay.core.errors import InputError
from replay.core.limits import MAX_TOKENS
from replay.models.types import ChatRequest, Message, Model
from replay.records.summary import Summary

MASKING_KEEP_LAST = 2
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
    def agent(self) -> CompactionAgent | None:
        """The compaction agent whose prompt writes the summary text (a fused summary's base's;
        None for a mechanical one)."""
        if self.fused is not None:
            return self.fused.base.agent
        return agents.agent(self.prompt) if self.prompt is not None else None

    @property
    def source_prompt(self) -> str | None:
        """The synced prompt the summary text comes from (both Hermes settings use the one
        `hermes` prompt)."""
        return self.agent.source if self.agent is not None else None


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
        if not 1 <= int(match.group(1)) <= MAX_TOKENS:
            raise InputError(f"summarizer {text!r}: tail:N keeps the last N tokens of the "
                             f"history, so N must be from 1 to {MAX_TOKENS}")
        return SummarizerName(text, tail_tokens=int(match.group(1)))
    backbone, _, prompt = text.rpartition(":")
    if not backbone or prompt not in agents.names():
        raise InputError(f"unknown summarizer {text!r}: use MODEL:PROMPT with PROMPT one of "
                         f"{', '.join(agents.names())}, or anchor_index, observation-masking, "
                         "tail:N")
    return SummarizerName(text, backbone=backbone, prompt=prompt)


def parse_summarizers(texts: Iterable[str]) -> dict[str, SummarizerName]:
    """Summarizer names (a run's, a command line's) parsed once each, by their text, in order."""
    return {text: parse_summarizer(text) for text in texts}


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
    agent = name.agent
    if prompt is None or model is None or agent is None:
        raise InputError(f"summarizer {name.name} needs a model and a synced prompt")
    return _model_summary(history, name.name, agent, prompt, model, seed_index, temperature)


def _fused_summary(history: list[Message], name: str, fused: Fused, prompt: PromptText | None,
                   model: Model | None, seed_index: int, judge: Model | None,
                   temperature: float) -> Summary:
    if judge is None:
        raise InputError(f"summarizer {name} needs its evidence judge model")
    base = summarize(history, fused.base, prompt, model, seed_index, temperature=temperature)
    fusion = fuse(history, base.text, fused.top, judge)
    requests, input_tokens, output_tokens, cost = (list(base.requests), base.input_tokens,
                                                   base.output_tokens, base.cost)
    if fusion.judge_request is not None and fusion.judge_response is not None:
        requests.append(fusion.judge_request)
        input_tokens += fusion.judge_response.usage.input_tokens
        output_tokens += fusion.judge_response.usage.output_tokens
        cost += fusion.judge_response.cost
    return Summary(name, fusion.text, requests=requests, input_tokens=input_tokens,
                   output_tokens=output_tokens, cost=cost,
                   details={**base.details, **fusion.details})


def _model_summary(history: list[Message], name: str, agent: CompactionAgent,
                   prompt: PromptText, model: Model, seed_index: int,
                   temperature: float) -> Summary:
    calls = _Calls(model, seed_index, temperature)
    draft = agent.write(history, prompt, calls)
    details = {"truncated": True} if calls.truncated else {}
    return Summary(name, draft.text, requests=calls.requests,
                   input_tokens=calls.input_tokens, output_tokens=calls.output_tokens,
                   cost=calls.cost, details={**details, **draft.details})


class _Calls:
    """The summarizer model's calls for one summary (an `agents.base.Ask`): each request as
    sent, their usage and cost, and whether a reply was cut off by its output cap."""

    def __init__(self, model: Model, seed_index: int, temperature: float) -> None:
        self.model, self.seed_index, self.temperature = model, seed_index, temperature
        self.requests: list[ChatRequest] = []
        self.input_tokens = self.output_tokens = 0
        self.cost = 0.0
        self.truncated = False

    def __call__(self, messages: list[Message], tools: list[dict[str, Any]] | None = None) -> str:
        request = ChatRequest(messages=messages, tools=TOOLS if tools is None else tools,
                              temperature=self.temperature, max_tokens=SUMMARY_MAX_TOKENS,
                              tool_choice="none")
        response = self.model.complete(request, seed_index=self.seed_index)
        self.truncated = self.truncated or response.finish_reason in CUT_OFF
        self.requests.append(request)
        self.input_tokens += response.usage.input_tokens
        self.output_tokens += response.usage.output_tokens
        self.cost += response.cost
        content = response.message.get("content")
        return content if isinstance(content, str) else ""
