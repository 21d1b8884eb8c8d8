"""Hermes' compaction: its code read by name (the native setting), and the study's budget rules
(the study's H through Hermes' real class: test_hermes_real.py).

The Hermes code is a small stand-in (hermes_scripts.py); the summarizer is a scripted model whose
replies are of chosen lengths.
"""

from __future__ import annotations

import pytest
from rich.console import Console

from replay.commands.prompts import prompts_list
from replay.compaction import hermes
from replay.compaction.carriers import post_messages
from replay.compaction.fusion import budget, evidence_units
from replay.compaction.sources import load_sources
from replay.compaction.summarize import parse_summarizer, summarize
from replay.core.paths import instances_dir
from replay.histories.records import load_history_file
from replay.models.scripted import ScriptedModel
from replay.models.scripts import Script
from replay.records.history import History

from hermes_scripts import PROMPT, REDACTION

SECRET = "sk-" + "a1" * 12


def panel_history() -> History:
    folder = instances_dir() / "probe-panel" / "replay-panel__serverlog-1"
    return load_history_file(folder / "history.json")


def reply(words: int) -> dict[str, str]:
    """A reply of `words` five-character words (6 characters a word with its space), with the
    native prefix Hermes puts before a body, a think block and a secret."""
    body = " ".join(["facts"] * words)
    return {"content": f"<think>draft</think>{hermes_prefix()}\n"
                       f"## Critical Context\n{body} {SECRET}"}


def hermes_prefix() -> str:
    return "[HANDOFF] Earlier turns were compacted:"


def test_the_budget_rules() -> None:
    code = hermes.load_code(PROMPT)
    for name, allowed in (("build-token", 195), ("three-files", 64)):
        history = load_history_file(instances_dir() / "reme" / f"reme__{name}-1"
                                    / "history.json").messages
        frozen = budget(history, evidence_units(history))  # the same as S's, in Qwen tokens
        assert hermes.allowance(history, hermes.STUDY, code) == (frozen.evidence_tokens,
                                                                  allowed)
    build = load_history_file(instances_dir() / "reme" / "reme__build-token-1"
                              / "history.json").messages
    evidence = hermes.evidence_tokens(code, build)  # Hermes' own: characters / 4
    assert evidence // 5 < 2000 and hermes.allowance(build, hermes.NATIVE, code) == (
        evidence, 2000)  # at least Hermes' floor
    assert hermes.targets(64, hermes.STUDY) == [(64, 22), (51, 18), (40, 18)]  # >= 18 words
    assert hermes.targets(3000, hermes.NATIVE) == [(3000, None)]


def test_native_hermes_is_one_call_and_its_carrier_is_hermes_own() -> None:
    model = ScriptedModel(Script([reply(600)]))
    history = panel_history()
    summary = summarize(history.messages, parse_summarizer("m:hermes"), PROMPT, model)
    assert len(model.requests) == 1 and summary.details["valid"] is True
    assert "Target ~2000 tokens." in model.requests[0].messages[0]["content"]
    messages = post_messages(summary, history.messages, "the issue", "/testbed", "native", PROMPT)
    assert messages[-1]["content"].startswith(hermes_prefix() + "\n## Critical Context")
    assert messages[-1]["content"].endswith("--- END OF SUMMARY ---")


def test_prompts_list_shows_the_sixth_method_with_its_sha256() -> None:
    out = Console(width=200, record=True)
    prompts_list(console=out)
    lines = [line for line in out.export_text().splitlines() if "hermes" in line
             or "05b87f1c2b7820404e3de8a6852ff3c83fe00c7a3ca79028cf25817657b33d63" in line]
    assert any("hermes-agent@0.19.0" in line and "code" in line and "185612" in line
               and "05b87f1c2b78" in line for line in lines), lines


def test_both_settings_use_the_pinned_hermes_prompt() -> None:
    assert parse_summarizer("m:hermes-h").source_prompt == "hermes"
    assert parse_summarizer("m:hermes-h+top:3").source_prompt == "hermes"
    source = load_sources()["hermes"]
    assert source.package == "hermes-agent" and source.version == "0.19.0"
    assert [part.role for part in source.parts] == ["code", "redaction"]
    broken = PROMPT.model_copy(update={"parts": {"code": "X = 1\n", "redaction": REDACTION}})
    with pytest.raises(hermes.HermesCodeError, match="no ContextCompressor"):
        hermes.load_code(broken)
