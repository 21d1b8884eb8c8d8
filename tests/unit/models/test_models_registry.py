"""Aliases: built-ins, user overrides, ad-hoc specs, unknown names, and `replay models`."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from replay.api import models as models_table
from replay.commands.models import models_command
from replay.core.errors import InputError
from replay.models.registry import load_registry, parse_adhoc, resolve

from conftest import FAKE_KEY, KEY_ENV

USER_FILE = f"""
["gpt-4.1"]
price_in = 1.5

["local-qwen"]
provider = "openai"
model = "Qwen/Qwen2.5-7B-Instruct"
base_url = "http://127.0.0.1:8000/v1/"
key_env = "{KEY_ENV}"
context_window = 32768
tool_choice = "required"
extra_body = {{ top_k = 20 }}
"""


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(USER_FILE)
    return path


@pytest.mark.parametrize(("alias", "provider", "key_env"), [
    ("gpt-4.1", "openai", "OPENAI_API_KEY"),
    ("claude-sonnet-4", "anthropic", "ANTHROPIC_API_KEY"),
    ("gemini-2.5-flash", "openai", "GEMINI_API_KEY"),
    ("kimi-k2", "openai", "MOONSHOT_API_KEY"),
    ("deepseek-chat", "openai", "DEEPSEEK_API_KEY"),
    ("qwen-plus", "openai", "DASHSCOPE_API_KEY"),
    ("glm-4.6", "openai", "ZAI_API_KEY"),
])
def test_builtin_aliases(user_file: Path, alias: str, provider: str, key_env: str) -> None:
    spec = resolve(alias, user_file)
    assert (spec.alias, spec.provider, spec.key_env) == (alias, provider, key_env)
    assert spec.context_window and spec.price_out > spec.price_in > 0


def test_a_user_file_overrides_fields_and_adds_aliases(user_file: Path) -> None:
    registry = load_registry(user_file)
    assert registry["gpt-4.1"].price_in == 1.5 and registry["gpt-4.1"].price_out == 8.0
    local = registry["local-qwen"]
    assert local.base_url == "http://127.0.0.1:8000/v1" and local.context_window == 32768


def test_a_bad_user_entry_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text('["mine"]\nprovider = "ollama"\nmodel = "x"\nbase_url = "http://h/v1"\n')
    with pytest.raises(InputError, match=r"models.toml: model 'mine': field provider"):
        load_registry(path)


def test_an_explicit_user_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_registry(tmp_path / "missing.toml")


@pytest.mark.parametrize(("text", "provider", "model", "base_url", "key_env"), [
    ("openai:Qwen2.5-7B@http://127.0.0.1:8000/v1", "openai", "Qwen2.5-7B",
     "http://127.0.0.1:8000/v1", ""),
    ("openai:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:30000/v1#VLLM_KEY", "openai",
     "Qwen/Qwen2.5-7B-Instruct", "http://127.0.0.1:30000/v1", "VLLM_KEY"),
    ("openai:qwen2.5:7b@http://localhost:11434/v1", "openai", "qwen2.5:7b",
     "http://localhost:11434/v1", ""),
    ("openai:gpt-4o-2024-08-06", "openai", "gpt-4o-2024-08-06", "https://api.openai.com/v1",
     "OPENAI_API_KEY"),
    ("anthropic:claude-sonnet-4@20250514#MY_KEY", "anthropic", "claude-sonnet-4@20250514",
     "https://api.anthropic.com/v1", "MY_KEY"),
])
def test_adhoc_specs(text: str, provider: str, model: str, base_url: str, key_env: str) -> None:
    spec = parse_adhoc(text)
    assert (spec.provider, spec.model, spec.base_url, spec.key_env) == (
        provider, model, base_url, key_env)
    assert spec.alias == text and spec.price_in == spec.price_out == 0


@pytest.mark.parametrize("text", ["openai:", "openai:m@ftp://host/v1", "openai:m#1BAD"])
def test_malformed_adhoc_specs(user_file: Path, text: str) -> None:
    with pytest.raises(InputError, match="PROVIDER:MODEL"):
        resolve(text, user_file)


def test_an_unknown_alias_lists_close_matches(user_file: Path) -> None:
    with pytest.raises(InputError, match="did you mean claude-sonnet-4") as caught:
        resolve("claude-sonet-4", user_file)
    assert "replay models" in str(caught.value)


def test_models_table_reports_keys_without_values(user_file: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    rows = {row.alias: row for row in models_table(user_file)}
    assert rows["local-qwen"].key_set is True and rows["gpt-4.1"].price_in == 1.5
    out = io.StringIO()
    models_command(user_file, Console(file=out, width=250))
    text = out.getvalue()
    assert "local-qwen" in text and f"{KEY_ENV} set" in text and FAKE_KEY not in text
    assert rows["local-qwen"].settings == 'tool_choice=required, extra_body={"top_k": 20}'
    assert rows["gpt-4.1"].settings == "-" and 'extra_body={"top_k": 20}' in text
