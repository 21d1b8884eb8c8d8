"""The model calls of one cell, found in the store's `model_calls` table.

The call cache keeps requests by content, not by cell, so a cell's calls are found from what it
kept:

- the agent's: each step's request is the trace's messages before that step's reply, with the
  agent's tools and settings, so its cache key is computed exactly as the client computed it;
- the summarizer's: the calls of that model and sample whose request holds the history and whose
  reply gives the kept summary text (with gemini-cli's first call, whose reply its second call
  carries).

Latency is shown where the call recorded it (its `seconds`); tokens, cached tokens and cost
always.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from replay.agent.loop import AgentConfig
from replay.agent.tools import TOOLS
from replay.compaction.summarize import parse_summarizer
from replay.models.cache import cache_key, request_content
from replay.models.client import settled
from replay.models.types import ChatRequest, Message, ModelSpec
from replay.store import Store
from replay.store.calls import CallRow, calls_asking, kept_call

AGENT_ID = re.compile(r"(?P<provider>openai|anthropic):(?P<model>.+)@(?P<base_url>https?://.+)")
FRAGMENT_CHARS = 300


@dataclass
class Call:
    """One model call of a cell; `found` is False when the store does not hold it."""

    arm: str
    what: str
    key: str = ""
    model: str = ""
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    latency: float | None = None
    created_at: str = ""
    found: bool = True


def _call(arm: str, what: str, row: CallRow) -> Call:
    return Call(arm, what, row.key, row.model, row.input_tokens, row.cached_tokens,
                row.output_tokens, row.cost, None if row.seconds is None else float(row.seconds),
                row.created_at)


def agent_calls(store: Store, agent_id: str, trace: dict[str, Any], config: AgentConfig,
                seed_index: int, arm: str) -> list[Call]:
    """The calls of a continuation's steps, in order."""
    match = AGENT_ID.fullmatch(agent_id)
    messages = trace.get("messages") or []
    start = trace.get("start_index", 0)
    ends = [index for index in range(start, len(messages))
            if messages[index].get("role") == "assistant"]
    if match is None:
        return [Call(arm, f"step {n}", found=False) for n in range(1, len(ends) + 1)]
    spec = ModelSpec(alias="agent", **match.groupdict())
    calls = []
    for number, end in enumerate(ends, start=1):
        request = ChatRequest(messages=messages[:end], tools=TOOLS,
                              temperature=config.temperature, max_tokens=config.max_tokens)
        key = cache_key(request_content(spec, settled(spec, request, seed_index), seed_index))
        row = kept_call(store, key)
        calls.append(_call(arm, f"step {number}", row) if row
                     else Call(arm, f"step {number}", key, spec.model, found=False))
    return calls


def summary_calls(store: Store, summarizer: str, history: list[Message], text: str,
                  seed_index: int) -> list[Call]:
    """The calls that wrote a POST cell's summary (none for a mechanical summarizer)."""
    name = parse_summarizer(summarizer)
    agent = name.agent
    if name.mechanical or agent is None or not history:
        return []
    task = next((m for m in history if m.get("role") == "user"), history[-1])
    fragment = json.dumps(_content(task)[:FRAGMENT_CHARS], ensure_ascii=False)[1:-1]
    rows = calls_asking(store, seed_index, fragment)
    parsed = [(row, json.loads(row.request_json)["messages"], _reply(row.response_json))
              for row in rows]
    last = history[-1]
    finals = [(row, messages) for row, messages, reply in parsed
              if last in messages and agent.finish(reply) == text]
    if not finals:
        return []
    row, messages = finals[0]
    calls = [_call("post", "summary", row)]
    if agent.calls > 1 and len(messages) >= 2:
        first = next((other for other, asked, reply in parsed
                      if asked == messages[:-2] and reply == _content(messages[-2])), None)
        if first is not None:
            calls = [_call("post", "summary (draft)", first), *calls]
    return calls


def _content(message: Message) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _reply(response_json: str) -> str:
    content = json.loads(response_json).get("message", {}).get("content")
    return content if isinstance(content, str) else ""
