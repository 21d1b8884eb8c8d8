"""Faults over real HTTP: transient ones are retried, request and key faults are not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from replay.core.errors import HarnessError, InputError
from replay.models.cache import CallCache
from replay.models.retry import retry_call
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.models.transport import ModelRequestRejected, ModelTransientError, parse_retry_after
from replay.models.types import ChatRequest

from conftest import FAKE_KEY, FAST, KEY_ENV, make_client

GOOD = {"content": "recovered"}
ASK = ChatRequest(messages=[{"role": "user", "content": "hello"}])


@pytest.fixture
def cache(tmp_path: Path) -> CallCache:
    with CallCache(tmp_path / "replay.db") as cache:
        yield cache


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", [
    {"fault": "429"},
    {"fault": "500"},
    {"fault": "503", "message": "overloaded"},
    {"fault": "malformed"},
    {"fault": "drop"},
    {"fault": "slow", "seconds": 2, "content": "too late"},
], ids=lambda fault: fault["fault"])
def test_a_transient_fault_is_retried(cache: CallCache, fault: dict, provider: str) -> None:
    with ScriptedServer(Script([fault, GOOD])) as server:
        spec = server.spec(provider=provider, key_env=KEY_ENV)
        with make_client(spec, cache, timeout=0.3) as client:
            response = client.complete(ASK)
        assert server.count == 2
    assert response.message["content"] == "recovered"


def test_retry_after_is_honoured(cache: CallCache) -> None:
    with ScriptedServer(Script([{"fault": "429", "retry_after": 1}, GOOD])) as server:
        with make_client(server.spec(), cache) as client:
            started = time.monotonic()
            client.complete(ASK)
            waited = time.monotonic() - started
        assert server.count == 2
    assert waited >= 1.0


def test_a_persisting_fault_raises_after_max_attempts(cache: CallCache) -> None:
    with ScriptedServer(Script([{"fault": "500", "message": "boom"}])) as server:
        with make_client(server.spec(), cache, max_attempts=3) as client, \
                pytest.raises(ModelTransientError, match="HTTP 500: boom") as caught:
            client.complete(ASK)
        assert server.count == 3
    assert isinstance(caught.value, HarnessError)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_refused_key_names_its_variable_and_is_not_retried(cache: CallCache,
                                                             provider: str) -> None:
    with ScriptedServer(Script([GOOD]), api_key="the-right-key") as server:
        with make_client(server.spec(provider=provider, key_env=KEY_ENV), cache) as client, \
                pytest.raises(InputError, match=f"HTTP 401.*check {KEY_ENV}"):
            client.complete(ASK)
        assert server.count == 1


def test_forbidden_is_not_retried(cache: CallCache) -> None:
    with ScriptedServer(Script([{"fault": "403"}])) as server:
        with make_client(server.spec(key_env=KEY_ENV), cache) as client, \
                pytest.raises(InputError, match=f"check {KEY_ENV}"):
            client.complete(ASK)
        assert server.count == 1


def test_not_found_names_the_model_and_base_url(cache: CallCache) -> None:
    with ScriptedServer(Script([{"fault": "404", "message": "no such model"}])) as server:
        spec = server.spec("qwen-9000")
        with make_client(spec, cache) as client, pytest.raises(ModelRequestRejected) as caught:
            client.complete(ASK)
        assert server.count == 1
    assert "'qwen-9000'" in str(caught.value) and spec.base_url in str(caught.value)
    assert caught.value.status == 404


def test_bad_request_gives_the_server_message(cache: CallCache) -> None:
    fault = {"fault": "400", "message": "maximum context length is 8192 tokens"}
    with ScriptedServer(Script([fault])) as server:
        with make_client(server.spec(provider="anthropic"), cache) as client, \
                pytest.raises(InputError, match="maximum context length is 8192"):
            client.complete(ASK)
        assert server.count == 1


def test_a_missing_key_fails_before_any_request(cache: CallCache,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV)
    with ScriptedServer(Script([GOOD])) as server:
        with make_client(server.spec(key_env=KEY_ENV), cache) as client, \
                pytest.raises(InputError, match=f"set {KEY_ENV}"):
            client.complete(ASK)
        assert server.count == 0


def test_other_exceptions_are_never_retried() -> None:
    calls = []

    def buggy(seconds_left: float) -> None:
        calls.append(seconds_left)
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        retry_call(buggy, model="m", endpoint="http://127.0.0.1:9/v1", max_attempts=5,
                   backoff=FAST)
    assert len(calls) == 1


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
