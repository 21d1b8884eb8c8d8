"""Both wire formats through the real scripted server: tool calls out and back, rules, usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.models.anthropic import convert_messages
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.scripted import ScriptedModel, ScriptedServer
from replay.models.scripts import Script
from replay.models.transport import ModelRequestRejected
from replay.models.types import ChatRequest

from conftest import BASH_TOOL, FAKE_KEY, FAST, KEY_ENV, bash_call, history, make_client

TOOL_TURN = {"content": "Running the tests.",
             "tool_calls": [{"function": {"name": "bash", "arguments": {"command": "pytest"}}}]}


@pytest.fixture
def cache(tmp_path: Path) -> CallCache:
    with CallCache(tmp_path / "replay.db") as cache:
        yield cache


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)


def test_openai_round_trip_of_tool_calls(cache: CallCache) -> None:
    request = ChatRequest(messages=history(), tools=[BASH_TOOL], temperature=0.2, max_tokens=300,
                          seed=7)
    with ScriptedServer(Script([TOOL_TURN]), api_key=FAKE_KEY) as server:
        spec = server.spec("agent", key_env=KEY_ENV)
        with make_client(spec, cache) as client:
            response = client.complete(request)
        [received] = server.requests

    assert received.authorization == f"Bearer {FAKE_KEY}"
    assert received.body["messages"] == history()
    assert received.body["tools"] == [BASH_TOOL]
    assert (received.body["temperature"], received.body["max_tokens"], received.body["seed"]) == (
        0.2, 300, 7)
    [call] = response.message["tool_calls"]
    assert response.message["content"] == "Running the tests."
    assert call["type"] == "function" and call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == {"command": "pytest"}
    assert response.finish_reason == "tool_calls" and not response.from_cache


def test_anthropic_converts_history_and_reply(cache: CallCache) -> None:
    request = ChatRequest(messages=history(), tools=[BASH_TOOL], temperature=0.0, seed=3)
    with ScriptedServer(Script([TOOL_TURN]), api_key=FAKE_KEY) as server:
        spec = server.spec("claude", provider="anthropic", key_env=KEY_ENV)
        with make_client(spec, cache) as client:
            response = client.complete(request)
        [received] = server.requests

    body = received.body
    assert received.path == "/v1/messages" and received.api_key == FAKE_KEY
    assert [block["text"] for block in body["system"]] == ["You are a careful engineer."]
    assert "seed" not in body and body["max_tokens"] > 0 and body["temperature"] == 0.0
    assert body["tools"][0]["input_schema"] == BASH_TOOL["function"]["parameters"]
    assert [turn["role"] for turn in body["messages"]] == ["user", "assistant", "user"]
    tool_use_ids = [b["id"] for b in body["messages"][1]["content"] if b["type"] == "tool_use"]
    assert tool_use_ids == ["functions_bash_0", "call_2"]
    results = body["messages"][2]["content"]
    assert [b.get("tool_use_id") for b in results] == ["functions_bash_0", "call_2", None]
    assert results[2] == {"type": "text", "text": "Continue.",
                          "cache_control": {"type": "ephemeral"}}  # see test_prompt_caching.py
    [call] = response.message["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"command": "pytest"}
    assert response.finish_reason == "tool_use"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_reply_goes_back_into_the_next_request(cache: CallCache, provider: str) -> None:
    """Two agent steps: the server's wire checks accept the converted tool call and result."""
    script = Script([TOOL_TURN, {"content": "All tests pass."}])
    with ScriptedServer(script) as server, make_client(server.spec(provider=provider),
                                                         cache) as client:
        messages = history()
        first = client.complete(ChatRequest(messages=messages, tools=[BASH_TOOL]))
        call_id = first.message["tool_calls"][0]["id"]
        messages += [first.message, {"role": "tool", "tool_call_id": call_id, "content": "ok"}]
        second = client.complete(ChatRequest(messages=messages, tools=[BASH_TOOL]))
        assert server.count == 2
    assert second.message == {"role": "assistant", "content": "All tests pass."}


def test_an_unanswered_tool_call_is_rejected_like_the_real_api(cache: CallCache) -> None:
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": None, "tool_calls": [bash_call("c1", "ls")]},
                {"role": "user", "content": "and?"}]
    with ScriptedServer(Script([{"content": "x"}])) as server:
        with make_client(server.spec(provider="anthropic"), cache) as client, \
                pytest.raises(ModelRequestRejected, match="without tool_result"):
            client.complete(ChatRequest(messages=messages))
        assert server.count == 1


def test_rules_route_models_and_summaries_on_one_server(cache: CallCache) -> None:
    summarizer = Script([{"content": "SUMMARY"}], contains="summarize")
    agent = Script([{"content": "step 1"}, {"content": "step 2"}], model="agent")
    with ScriptedServer(summarizer, agent) as server, \
            make_client(server.spec("agent"), cache) as agent_client, \
            make_client(server.spec("small", provider="anthropic"), cache) as small_client:
        ask = [{"role": "user", "content": "please summarize the history"}]
        work = [{"role": "user", "content": "fix it"}]
        assert small_client.complete(ChatRequest(messages=ask)).message["content"] == "SUMMARY"
        replies = [agent_client.complete(ChatRequest(messages=work), seed_index=i)
                   for i in range(3)]
        assert [r.message["content"] for r in replies] == ["step 1", "step 2", "step 2"]
        assert (server.count_for("agent"), server.count_for("small")) == (3, 1)


def test_an_exhausted_script_serves_its_default(cache: CallCache) -> None:
    script = Script([{"content": "one"}], default={"content": "out of script"})
    with ScriptedServer(script) as server, make_client(server.spec(), cache) as client:
        contents = [client.complete(ChatRequest(messages=[{"role": "user", "content": "q"}]),
                                    seed_index=i).message["content"] for i in range(3)]
    assert contents == ["one", "out of script", "out of script"]


def test_usage_cost_and_per_client_counters(cache: CallCache) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 200, "cached_tokens": 400,
             "cache_write_tokens": 0}
    with ScriptedServer(Script([{"content": "ok", "usage": usage}])) as server:
        spec = server.spec(provider="anthropic", price_in=3.0, price_out=15.0)
        with make_client(spec, cache) as client, make_client(spec, cache) as other:
            response = client.complete(ChatRequest(messages=[{"role": "user", "content": "q"}]))
            client.complete(ChatRequest(messages=[{"role": "user", "content": "q"}]))
    assert response.usage.model_dump() == usage
    # cache reads at a tenth of the input price (see test_prompt_caching.py)
    assert response.cost == pytest.approx((600 * 3.0 + 400 * 0.3 + 200 * 15.0) / 1e6)
    assert (client.stats.calls, client.stats.cache_hits, client.stats.input_tokens) == (1, 1, 1000)
    assert client.stats.cost == pytest.approx(response.cost)
    assert other.stats.calls == 0


def test_scripted_model_in_process(cache: CallCache) -> None:
    fake = ScriptedModel(Script([TOOL_TURN, {"content": "done"}]))
    client = ModelClient(fake.spec, cache, provider=fake)
    first = client.complete(ChatRequest(messages=history(), tools=[BASH_TOOL]))
    assert first.message["tool_calls"][0]["function"]["name"] == "bash"
    assert len(fake.requests) == 1 and fake.requests[0].tools == [BASH_TOOL]


def test_a_models_own_settings_win_and_go_with_every_request(cache: CallCache) -> None:
    ask = [{"role": "user", "content": "q"}]
    with ScriptedServer(Script([{"content": "ok"}])) as server:
        spec = server.spec(temperature=0.7, max_tokens=123, tool_choice="required",
                           extra_body={"top_k": 20, "chat_template_kwargs": {"think": False}})
        with make_client(spec, cache) as client:
            client.complete(ChatRequest(messages=ask, tools=[BASH_TOOL], temperature=1.0), 2)
            again = client.complete(ChatRequest(messages=ask, tools=[BASH_TOOL],
                                                temperature=0.0), 2)
            client.complete(ChatRequest(messages=ask))
        sent = [request.body for request in server.requests]
    # the spec's temperature wins, so the second request is the first: answered from the cache
    assert again.from_cache and len(sent) == 2
    assert {key: sent[0][key] for key in ("temperature", "max_tokens", "seed", "tool_choice",
                                          "top_k", "chat_template_kwargs")} == {
        "temperature": 0.7, "max_tokens": 123, "seed": 2, "tool_choice": "required",
        "top_k": 20, "chat_template_kwargs": {"think": False}}
    assert "tool_choice" not in sent[1] and sent[1]["seed"] == 0  # no tools, sample 0


def test_anthropic_gets_its_tool_choice_and_no_seed(cache: CallCache) -> None:
    with ScriptedServer(Script([{"content": "ok"}])) as server:
        spec = server.spec(provider="anthropic", tool_choice="required")
        with make_client(spec, cache) as client:
            client.complete(ChatRequest(messages=[{"role": "user", "content": "q"}],
                                        tools=[BASH_TOOL], temperature=1.0), 1)
        body = server.requests[0].body
    assert body["tool_choice"] == {"type": "any"} and "seed" not in body


def test_anthropic_conversion_merges_turns_and_keeps_odd_arguments() -> None:
    odd_call = {"id": "c1", "type": "function",
                "function": {"name": "bash", "arguments": "ls -la"}}
    system, turns = convert_messages([
        {"role": "system", "content": [{"type": "text", "text": "rules"}]},
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": None, "tool_calls": [odd_call]},
        {"role": "tool", "tool_call_id": "c1", "content": ""},
    ])
    assert system == "rules"
    assert [turn["role"] for turn in turns] == ["user", "assistant", "user"]
    assert [block["text"] for block in turns[0]["content"]] == ["a", "b"]
    assert turns[1]["content"] == [{"type": "tool_use", "id": "c1", "name": "bash",
                                    "input": {"raw_arguments": "ls -la"}}]
    assert turns[2]["content"] == [{"type": "tool_result", "tool_use_id": "c1"}]


def test_scripted_model_faults_go_through_the_retry_wrapper(cache: CallCache) -> None:
    fake = ScriptedModel(Script([{"fault": "500"}, {"fault": "drop"}, {"content": "ok"}]))
    client = ModelClient(fake.spec, cache, provider=fake, max_attempts=3, backoff=FAST)
    assert client.complete(ChatRequest(messages=[{"role": "user", "content": "q"}])).message[
        "content"] == "ok"
    assert len(fake.requests) == 3
