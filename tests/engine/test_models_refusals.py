"""Requests a server refuses for their content, per-model request settings, and servers that
behave as real ones do (a context too long, tools dropped without tool_choice), over real HTTP."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from replay.core.errors import Halt, InputError
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.refusals import DIALECTS, context_refusal
from replay.models.registry import parse_adhoc
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.models.transport import ModelNotFound, ModelRefused
from replay.models.types import ChatRequest

from conftest import BASH_TOOL, FAST, make_client

# The bodies as their sources quote them (see replay/models/refusals.py for each source):
# mckaywrigley/chatbot-ui#102 (OpenAI API, raw response text, pretty-printed, final newline)
OPENAI_BODY = (
    '{\n  "error": {\n    "message": "This model\'s maximum context length is 4097 tokens. '
    'However, you requested 4120 tokens (3120 in the messages, 1000 in the completion). Please '
    'reduce the length of the messages or completion.",\n    "type": "invalid_request_error",\n'
    '    "param": "messages",\n    "code": "context_length_exceeded"\n  }\n}\n')
# llamastack/llama-stack discussion #981 (vLLM's message, in FastAPI's compact JSON)
VLLM_BODY = (
    '{"object":"error","message":"This model\'s maximum context length is 6048 tokens. However, '
    'you requested 6616 tokens (568 in the messages, 6048 in the completion). Please reduce the '
    'length of the messages or completion.","type":"BadRequestError","param":null,"code":400}')
# oobabooga/textgen#7257 (llama-server since ggml-org/llama.cpp#15780)
LLAMA_CPP_BODY = (
    '{"error":{"code":400,"message":"the request exceeds the available context size. try '
    'increasing the context size or enable context shift","type":"exceed_context_size_error",'
    '"n_prompt_tokens":14429,"n_ctx":8192}}')
LONG = [{"role": "user", "content": "x" * 4000}]  # about 1000 tokens at 4 characters a token


@pytest.fixture
def cache(tmp_path: Path) -> CallCache:
    with CallCache(tmp_path / "replay.db") as cache:
        yield cache


def test_the_templates_give_the_quoted_bodies_byte_for_byte() -> None:
    assert context_refusal("openai", 3120, 1000, 4097).decode() == OPENAI_BODY
    assert context_refusal("vllm", 568, 6048, 6048).decode() == VLLM_BODY
    assert context_refusal("llama.cpp", 14429, None, 8192).decode() == LLAMA_CPP_BODY


@pytest.mark.parametrize("body", [OPENAI_BODY, VLLM_BODY, LLAMA_CPP_BODY],
                         ids=["openai", "vllm", "llama.cpp"])
def test_a_context_refusal_is_kept_and_never_sent_again_at_any_seed(
        cache: CallCache, body: str) -> None:
    with ScriptedServer(Script([{"fault": "400", "body": body}])) as server:
        with make_client(server.spec(), cache) as client:
            with pytest.raises(ModelRefused) as caught:
                client.complete(ChatRequest(messages=LONG), 0)
            for seed in (0, 1, 2):
                with pytest.raises(ModelRefused):
                    client.complete(ChatRequest(messages=LONG), seed)
            assert client.stats.refusals == 4
        assert server.count == 1
    refused = caught.value
    assert refused.context and refused.status == 400 and isinstance(refused, InputError)
    assert "context length exceeded, HTTP 400" in str(refused)
    assert "maximum context length" in str(refused) or "available context size" in str(refused)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_server_with_a_small_context_refuses_what_does_not_fit(cache: CallCache,
                                                                 dialect: str) -> None:
    with ScriptedServer(Script([{"content": "ok"}]), context_window=500,
                        dialect=dialect) as server:
        with make_client(server.spec(), cache) as client:
            assert client.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}]))
            with pytest.raises(ModelRefused) as caught:
                client.complete(ChatRequest(messages=LONG, max_tokens=100))
        assert server.count == 2
    assert caught.value.context


def test_other_4xx_are_refusals_too_but_not_context_ones(cache: CallCache) -> None:
    turn = {"fault": "422", "message": "tool_choice: unsupported value"}
    with ScriptedServer(Script([turn])) as server, make_client(server.spec(), cache) as client, \
            pytest.raises(ModelRefused, match="refused the request \\(HTTP 422\\)") as caught:
        client.complete(ChatRequest(messages=LONG))
    assert not caught.value.context


def test_a_model_not_found_halts(cache: CallCache) -> None:
    missing = Script([{"fault": "404", "message": "model 'x' not found"}])
    with ScriptedServer(missing) as server, make_client(server.spec("x"), cache) as client, \
            pytest.raises(ModelNotFound) as caught:
        client.complete(ChatRequest(messages=LONG))
    assert isinstance(caught.value, Halt)


def test_tools_are_ignored_without_tool_choice_unless_the_model_sets_it(
        cache: CallCache) -> None:
    call = {"content": "Looking.", "tool_calls": [{"function": {"name": "bash",
                                                                "arguments": {"command": "ls"}}}]}
    ask = ChatRequest(messages=[{"role": "user", "content": "list"}], tools=[BASH_TOOL])
    with ScriptedServer(Script([call]), tools_need_choice=True) as server:
        with make_client(server.spec(), cache) as client:
            ignored = client.complete(ask)
        with make_client(server.spec(tool_choice="required"), cache) as client:
            called = client.complete(ask)
    assert "tool_calls" not in ignored.message and '"bash"' in ignored.message["content"]
    assert called.message["tool_calls"][0]["function"]["name"] == "bash"


def test_a_models_timeout_bounds_each_attempt(cache: CallCache) -> None:
    slow = {"fault": "slow", "seconds": 2, "content": "late"}
    with ScriptedServer(Script([slow, {"content": "ok"}])) as server:
        spec = server.spec(timeout=0.3)
        with ModelClient(spec, cache, backoff=FAST) as client:
            started = time.monotonic()
            answer = client.complete(ChatRequest(messages=LONG))
            assert time.monotonic() - started < 1.5
            assert client.timeout == 0.3 and client.deadline == 900
        assert server.count == 2 and answer.message["content"] == "ok"
    long = ModelClient(parse_adhoc("openai:m@http://127.0.0.1:9/v1?timeout=1800"), cache)
    assert (long.timeout, long.deadline) == (1800, 1800)


def test_adhoc_settings() -> None:
    spec = parse_adhoc("openai:qwen3@http://127.0.0.1:8000/v1#KEY?tool_choice=required"
                       "&temperature=0.6&max_tokens=2048&timeout=1800"
                       '&extra_body.top_k=20&extra_body.chat_template_kwargs={"enable_thinking":'
                       "false}&extra_body.note=plain-text")
    assert (spec.model, spec.base_url, spec.key_env) == ("qwen3", "http://127.0.0.1:8000/v1",
                                                         "KEY")
    assert (spec.tool_choice, spec.temperature, spec.max_tokens, spec.timeout) == (
        "required", 0.6, 2048, 1800)
    assert spec.extra_body == {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False},
                               "note": "plain-text"}


@pytest.mark.parametrize(("text", "message"), [
    ("openai:m@http://x/v1?tool_choice=always", "setting tool_choice"),
    ("openai:m@http://x/v1?toolchoice=required", "unknown setting 'toolchoice'"),
    ("openai:m@http://x/v1?timeout", "needs a value"),
    ("openai:m@http://x/v1?timeout=-1", "setting timeout"),
    ("openai:m@http://x/v1?extra_body.seed=1", "may not set seed"),
])
def test_bad_adhoc_settings_are_bad_input(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_adhoc(text)
