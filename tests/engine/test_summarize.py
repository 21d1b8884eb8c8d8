"""Summarizers as each agent uses its prompt, and the carriers that bring a summary back."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.compaction.agents.claude_code import claude_code_summary
from replay.compaction.carriers import post_messages
from replay.compaction.sources import PromptText
from replay.compaction.summarize import parse_summarizer, summarize
from replay.compaction.tails import kept_tail
from replay.core.errors import InputError
from replay.histories.records import bundled_history
from replay.instances.records import load_suite
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from conftest import make_client

HISTORY = bundled_history(load_suite("demo").instances[2])


def prompt(name: str, **parts: str) -> PromptText:
    """A stand-in for a synced prompt (the real texts are never in the repository)."""
    return PromptText(name=name, agent=name, registry="npm", package=name, version="0",
                      digest="sha512-test", parts=parts, synced_at="2026-01-01T00:00:00Z")


def test_summarizer_names() -> None:
    assert parse_summarizer("kimi:claude-code").backbone == "kimi"
    assert parse_summarizer("openai:m@http://127.0.0.1:1/v1:codex").prompt == "codex"
    assert parse_summarizer("tail:500").tail_tokens == 500
    assert parse_summarizer("anchor_index").mechanical
    with pytest.raises(InputError, match="unknown summarizer 'kimi:nope'"):
        parse_summarizer("kimi:nope")


def test_claude_code_post_processing() -> None:
    text = "<analysis>thinking</analysis>\n\n<summary>1. Request: fix it</summary>"
    assert claude_code_summary(text) == "Summary:\n1. Request: fix it"


@pytest.mark.parametrize("style, calls", [("claude-code", 1), ("codex", 1), ("kimi-code", 1),
                                          ("opencode", 1), ("gemini-cli", 2)])
def test_each_prompt_is_sent_the_way_its_agent_sends_it(style: str, calls: int,
                                                         tmp_path: Path) -> None:
    assert HISTORY is not None
    text = prompt(style, user="SUMMARIZE NOW", system="YOU SUMMARIZE") if style == "opencode" \
        else prompt(style, **{"system" if style == "gemini-cli" else "user": "SUMMARIZE NOW"})
    turns = [{"content": "<analysis>x</analysis><summary>first</summary>"},
             {"content": "<state_snapshot>refined</state_snapshot>"}]
    with ScriptedServer(Script(turns, model="backbone")) as server, \
            CallCache(tmp_path / "r.db") as cache, \
            make_client(server.spec("backbone"), cache) as client:
        summary = summarize(HISTORY.messages, parse_summarizer(f"backbone:{style}"), text, client)
        bodies = [request.body for request in server.requests]
    assert server.count == calls == len(summary.requests)
    first = bodies[0]["messages"]
    if style == "gemini-cli":
        assert first[0] == {"role": "system", "content": "SUMMARIZE NOW"}
        assert "Critically evaluate" in bodies[1]["messages"][-1]["content"]
        assert summary.text == "<state_snapshot>refined</state_snapshot>"
    elif style == "opencode":
        assert first[0]["content"] == "YOU SUMMARIZE"
        assert first[-1] == {"role": "user", "content": "SUMMARIZE NOW"}
    else:
        assert first[0] == HISTORY.messages[0]
        assert first[-1] == {"role": "user", "content": "SUMMARIZE NOW"}
    if style == "claude-code":
        assert summary.text == "Summary:\nfirst"
    assert summary.input_tokens > 0 and bodies[0]["tools"]


def test_mechanical_summaries_need_no_model() -> None:
    assert HISTORY is not None
    index = summarize(HISTORY.messages, parse_summarizer("anchor_index"))
    assert "/testbed/" in index.text
    masked = summarize(HISTORY.messages, parse_summarizer("observation-masking"))
    assert masked.messages is not None and len(masked.messages) == len(HISTORY.messages)
    messages = post_messages(masked, HISTORY.messages, "issue", "/testbed")
    assert messages == masked.messages


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli", "opencode",
                                  "kimi-code"])
def test_native_carriers_keep_valid_tool_pairing(name: str) -> None:
    assert HISTORY is not None
    summary = summarize(HISTORY.messages, parse_summarizer("tail:200"))
    used = prompt(name, user="SUMMARIZE", **{"summary-prefix": "Another model wrote this:"})
    messages = post_messages(summary, HISTORY.messages, "the issue", "/testbed", "native", used)
    assert messages[0]["role"] == "system"
    assert any(summary.text in str(m.get("content")) for m in messages)
    if name == "codex":
        assert messages[-1]["content"].startswith("Another model wrote this:\n")
    called = {c["id"] for m in messages for c in m.get("tool_calls") or []}
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert called == answered
    only = post_messages(summary, HISTORY.messages, "the issue", "/testbed")
    assert len(only) == 2 and "<summary>" in only[1]["content"]


def test_kept_tail_never_starts_with_a_tool_result() -> None:
    assert HISTORY is not None
    for budget in range(0, 3000, 50):
        tail = kept_tail(HISTORY.messages, budget)
        assert not tail or tail[0]["role"] != "tool"
