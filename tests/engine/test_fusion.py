"""Fusion compaction `S+top:N`: budgets, one judge call shared by every N, units whole and in
source order, and the judge seeing only the task and the units."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.compaction.fusion import (
    EVIDENCE_FRAME,
    FRAMING,
    SUMMARY_FRAME,
    budget,
    count_tokens,
    evidence_units,
    parse_scores,
)
from replay.compaction.summarize import parse_summarizer, summarize
from replay.core.errors import InputError
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from conftest import make_client

TASK = "Find why the nightly build breaks."
WORDS = ["apple", "river", "stone", "cloud", "green", "table", "light"]


def history(sizes: list[int], command: str = "c") -> list[dict]:
    """System (2 Qwen tokens), task, one assistant call per unit, each answered by `size` times
    unit N's word (one Qwen token each: `apple apple` is `apple`, ` apple`); the unit header
    `[output N: bash c]` is 8 tokens (its `]` and the line break after it are one)."""
    messages: list[dict] = [{"role": "system", "content": "alpha beta"},
                            {"role": "user", "content": TASK}]
    for number, size in enumerate(sizes, start=1):
        call = {"id": f"call_{number}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
        messages.append({"role": "assistant", "content": f"SAID-{number}", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{number}",
                         "content": " ".join([WORDS[number - 1]] * size)})
    return messages


def judge_turn(scores: dict[int, float]) -> dict:
    return {"content": json.dumps({"scores": {str(k): v for k, v in scores.items()}})}


def fused(tmp_path: Path, messages: list[dict], names: list[str], scores: dict[int, float],
          summary: str = "tail:20") -> tuple[list, ScriptedServer]:
    """Summaries for each `S+top:N` name, fusing `summary` with a scripted judge."""
    with ScriptedServer(Script([judge_turn(scores)], model="judge")) as server, \
            CallCache(tmp_path / "calls.db") as cache, \
            make_client(server.spec("judge"), cache) as judge:
        results = [summarize(messages, parse_summarizer(f"{summary}+top:{name}@judge"),
                             judge=judge) for name in names]
    return results, server


def test_budget_arithmetic() -> None:
    units = evidence_units(history([100, 200, 300, 400, 500, 600, 700]))
    assert [unit.tokens for unit in units] == [108, 208, 308, 408, 508, 608, 708]
    found = budget(history([100, 200, 300, 400, 500, 600, 700]), units)
    assert found.evidence_tokens == 2856
    assert found.allowance == 256  # 20% is 571, clamped to 256
    assert found.prompt_tokens == 2 + count_tokens(TASK)
    assert found.largest_tokens == 708 + 608 + 508 + 408 + 308
    assert found.ceiling == found.prompt_tokens + 256 + 2540 + 64 + 32
    small = history([10])
    assert budget(small, evidence_units(small)).allowance == 64  # 20% of 18, clamped to 64
    middle = history([592])  # 600 rendered tokens
    assert budget(middle, evidence_units(middle)).allowance == 120
    assert count_tokens(SUMMARY_FRAME) + count_tokens(EVIDENCE_FRAME) <= FRAMING


def test_judge_scores_are_computed_once_and_shared_across_n(tmp_path: Path) -> None:
    messages = history([30, 30, 30, 30])
    results, server = fused(tmp_path, messages, ["1", "2", "3"], {1: 2, 2: 9, 3: 5, 4: 7})
    assert server.count_for("judge") == 1
    assert [r.details["units_kept"] for r in results] == [[2], [2, 4], [2, 3, 4]]
    assert all(r.details["scores"] == [2.0, 9.0, 5.0, 7.0] for r in results)
    assert results[0].input_tokens == results[2].input_tokens > 0  # the same judge call


def test_units_are_rendered_whole_and_in_source_order(tmp_path: Path) -> None:
    messages = history([40, 5, 60])
    (result,), _ = fused(tmp_path, messages, ["2"], {1: 8, 2: 1, 3: 10})
    first, third = messages[3]["content"], messages[7]["content"]
    assert result.details["units_kept"] == [1, 3]
    assert first in result.text and third in result.text
    assert result.text.index(first) < result.text.index(third)
    assert messages[5]["content"] not in result.text
    assert result.details["unit_tokens"] == [48, 68]


def test_fewer_units_than_n_keeps_them_all(tmp_path: Path) -> None:
    (result,), _ = fused(tmp_path, history([10, 10, 10]), ["8"], {1: 1})
    assert result.details["units_kept"] == [1, 2, 3]
    assert result.details["units_available"] == 3
    assert result.details["judge_unscored"] == 2  # units 2 and 3 were not scored: 0


def test_units_past_the_ceiling_are_skipped_whole_never_cut(tmp_path: Path) -> None:
    sizes = [400, 400, 400, 400, 400, 2000, 2000]
    (result,), _ = fused(tmp_path, history(sizes), ["7"], {k: 10 - k for k in range(1, 8)})
    details = result.details
    kept = details["units_kept"]
    assert kept[:5] == [1, 2, 3, 4, 5] and details["units_skipped_for_ceiling"]
    assert sorted(kept + details["units_skipped_for_ceiling"]) == list(range(1, 8))
    assert details["fused_tokens"] + 64 <= details["ceiling"]
    for position in kept:
        unit = " ".join([WORDS[position - 1]] * sizes[position - 1])
        assert unit in result.text  # whole


def test_the_summary_is_held_to_the_allowance(tmp_path: Path) -> None:
    messages = history([10, 10])  # allowance 64
    (long,), _ = fused(tmp_path / "a", messages, ["1"], {1: 1}, summary="tail:500")
    assert long.details["summary_tokens"] > 64 == long.details["summary_kept_tokens"]
    (short,), _ = fused(tmp_path / "b", messages, ["1"], {1: 1}, summary="tail:30")
    assert short.details["summary_tokens"] == short.details["summary_kept_tokens"] < 64
    assert long.details["fused_tokens"] == long.details["prompt_tokens"] + count_tokens(long.text)
    assert long.details["shorter_than_full"] == (long.details["fused_tokens"]
                                                 < long.details["full_tokens"])


def test_the_judge_sees_only_the_task_and_the_units(tmp_path: Path) -> None:
    messages = history([12, 12])
    _, server = fused(tmp_path, messages, ["1"], {1: 3, 2: 4})
    (request,) = server.requests
    text = json.dumps(request.body["messages"])
    assert TASK in text and "apple apple" in text and "river river" in text
    assert "SAID-" not in text and "alpha beta" not in text
    assert request.body["temperature"] == 0


def test_a_model_summary_is_fused_with_its_backbone_as_judge(tmp_path: Path) -> None:
    from test_summarize import prompt

    messages = history([20, 20])
    scripts = [Script([judge_turn({1: 0, 2: 5})], model="backbone", contains="Rate every"),
               Script([{"content": "<summary>S-TEXT</summary>"}], model="backbone")]
    with ScriptedServer(*scripts) as server, CallCache(tmp_path / "c.db") as cache, \
            make_client(server.spec("backbone"), cache) as client:
        text = prompt("claude-code", user="SUMMARIZE")
        plain = summarize(messages, parse_summarizer("backbone:claude-code"), text, client)
        both = summarize(messages, parse_summarizer("backbone:claude-code+top:1"), text, client)
    assert server.count == 2  # the summary once (then from the cache), the judge once
    assert both.text.startswith(f"{SUMMARY_FRAME}\n{plain.text}")
    assert both.details["units_kept"] == [2] and len(both.requests) == 2


def test_judge_replies_and_fused_names() -> None:
    assert parse_scores('```json\n{"scores": {"1": 4, "2": true}}\n```', 3) == ([4.0, 0, 0], 2)
    assert parse_scores("no json", 2) == ([0.0, 0.0], 2)
    name = parse_summarizer("summ-a:claude-code+top:3")
    assert (name.backbone, name.prompt, name.source_prompt) == ("summ-a", None, "claude-code")
    assert name.fused is not None and (name.fused.top, name.fused.judge) == (3, "summ-a")
    with pytest.raises(InputError, match="name the evidence judge"):
        parse_summarizer("anchor_index+top:2")
    with pytest.raises(InputError, match="cannot be fused|not a summary text"):
        parse_summarizer("observation-masking+top:2@judge")
