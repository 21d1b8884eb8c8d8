"""Short column names for summarizers: labels, aliases, ad-hoc specs told apart by the settings
that differ, and the legend with every full name."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.compaction.summarize import parse_summarizers
from replay.models.registry import parse_adhoc
from replay.report.names import display_names, legend_lines, model_names

QWEN = "openai:Qwen2.5-7B@http://127.0.0.1:8000/v1#LOCAL_KEY"


@pytest.fixture(autouse=True)
def no_user_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No models.toml of the machine's user: only the built-in aliases."""
    monkeypatch.setenv("HOME", str(tmp_path))


def test_an_adhoc_label_names_the_column_and_is_no_part_of_a_request() -> None:
    spec = parse_adhoc(f"{QWEN}?temperature=0.7&label=qwen-warm")
    assert spec.label == "qwen-warm" and spec.model == "Qwen2.5-7B"
    assert model_names([f"{QWEN}?temperature=0.7&label=qwen-warm"]) == {
        f"{QWEN}?temperature=0.7&label=qwen-warm": "qwen-warm"}


def test_adhoc_models_are_told_apart_by_the_settings_that_differ() -> None:
    warm, cold = f"{QWEN}?temperature=0.7", f"{QWEN}?temperature=0&max_tokens=512"
    other = "openai:Qwen2.5-7B@http://10.0.0.2:8001/v1"
    names = model_names([warm, cold, other])
    assert names == {warm: "Qwen2.5-7B at=127.0.0.1:8000 temperature=0.7 max_tokens=-",
                     cold: "Qwen2.5-7B at=127.0.0.1:8000 temperature=0.0 max_tokens=512",
                     other: "Qwen2.5-7B at=10.0.0.2:8001 temperature=- max_tokens=-"}
    assert model_names(["openai:a@http://h:1/v1", "openai:b@http://h:1/v1"]) == {
        "openai:a@http://h:1/v1": "a", "openai:b@http://h:1/v1": "b"}


def test_a_backbone_sweep_of_adhoc_models_is_headed_by_model_names_with_a_legend() -> None:
    first, second = f"{QWEN}?temperature=0.7", "anthropic:claude-x#KEY"
    summarizers = [f"{first}:claude-code", f"{second}:claude-code", "anchor_index"]
    names, shared = display_names(parse_summarizers(summarizers), "backbone")
    assert names == {summarizers[0]: "Qwen2.5-7B", summarizers[1]: "claude-x",
                     "anchor_index": "anchor_index"}
    assert shared == "prompt claude-code"
    assert legend_lines(names) == [f"Qwen2.5-7B = {summarizers[0]}",
                                   f"claude-x = {summarizers[1]}"]


def test_a_prompt_sweep_is_headed_by_prompts_and_fused_names_are_shortened() -> None:
    model = f"{QWEN}?label=qwen"
    summarizers = [f"{model}:codex", f"{model}:kimi-code", f"{model}:codex+top:3@{model}"]
    names, shared = display_names(parse_summarizers(summarizers), "prompt")
    assert names == {summarizers[0]: "codex", summarizers[1]: "kimi-code",
                     summarizers[2]: "qwen:codex+top:3@qwen"}
    assert shared == "model qwen"


def test_one_label_on_two_models_gets_the_settings_that_differ() -> None:
    same = [f"{QWEN}?label=x:codex", f"{QWEN}?label=x&temperature=0:codex"]
    assert display_names(parse_summarizers(same), "backbone") == (
        {same[0]: "x temperature=-", same[1]: "x temperature=0.0"}, "prompt codex")
