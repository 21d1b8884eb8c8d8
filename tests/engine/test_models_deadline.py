"""One deadline per model call, retry notices and the breaker, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from replay.core.errors import Halt, HarnessError, InputError
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.retry import Breaker, EndpointUnreachable, ModelDeadlineExceeded, RetryNotice
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.models.transport import CONNECTION, KeyRefused, ModelTransientError
from replay.models.types import ChatRequest, ModelSpec

from conftest import FAKE_KEY, FAST, KEY_ENV, closed_port_url

ASK = ChatRequest(messages=[{"role": "user", "content": "hello"}])
HANG = {"fault": "hang"}
SLACK = 0.5  # seconds a call may overrun its deadline (connection set-up, thread wake-ups)


@pytest.fixture
def cache(tmp_path: Path) -> CallCache:
    with CallCache(tmp_path / "replay.db") as cache:
        yield cache


def timed_failure(client: ModelClient, expected: type[Exception]) -> tuple[float, Exception]:
    started = time.monotonic()
    with pytest.raises(expected) as caught:
        client.complete(ASK)
    return time.monotonic() - started, caught.value


def test_a_server_that_never_answers_fails_the_call_at_its_deadline(cache: CallCache) -> None:
    with ScriptedServer(Script([HANG])) as server:
        client = ModelClient(server.spec(), cache, backoff=FAST, deadline=1.0)
        with client:
            seconds, error = timed_failure(client, ModelDeadlineExceeded)
        assert server.count == 1
        assert server.base_url in str(error) and "1 s call deadline" in str(error)
    assert 1.0 <= seconds < 1.0 + SLACK
    assert isinstance(error, HarnessError) and not isinstance(error, Halt)


def test_each_attempt_gets_only_the_time_left(cache: CallCache) -> None:
    with ScriptedServer(Script([{"fault": "503"}, HANG])) as server:
        with ModelClient(server.spec(), cache, backoff=FAST, deadline=1.5) as client:
            seconds, error = timed_failure(client, ModelDeadlineExceeded)
        assert server.count == 2
    assert 1.5 <= seconds < 1.5 + SLACK  # the second attempt's timeout is what was left
    assert "(2 attempt(s), the last: timeout)" in str(error)


def test_a_wait_past_the_deadline_is_not_taken(cache: CallCache) -> None:
    with ScriptedServer(Script([{"fault": "429", "retry_after": 30}])) as server:
        with ModelClient(server.spec(), cache, deadline=2.0) as client:
            seconds, error = timed_failure(client, ModelDeadlineExceeded)
        assert server.count == 1
    assert seconds < SLACK and "the last: HTTP 429" in str(error)


def test_the_models_own_deadline_applies_unless_the_command_gives_one(cache: CallCache) -> None:
    with ScriptedServer(Script([HANG])) as server:
        spec = server.spec(deadline=0.5)
        with ModelClient(spec, cache) as client:
            seconds, _ = timed_failure(client, ModelDeadlineExceeded)
        assert 0.5 <= seconds < 0.5 + SLACK
        with ModelClient(spec, cache, deadline=1.0) as client:
            seconds, _ = timed_failure(client, ModelDeadlineExceeded)
        assert 1.0 <= seconds < 1.0 + SLACK


def test_each_retry_is_announced_with_model_endpoint_attempt_and_cause(cache: CallCache) -> None:
    notices: list[RetryNotice] = []
    script = Script([{"fault": "503"}, {"fault": "drop"}, {"content": "fine"}])
    with ScriptedServer(script) as server:
        spec = server.spec("m", alias="helper")
        with ModelClient(spec, cache, backoff=FAST, on_retry=notices.append) as client:
            assert client.complete(ASK).message["content"] == "fine"
        assert str(notices[0]).startswith(
            f"model 'helper' at {server.base_url}: attempt 1 of 6 failed (HTTP 503), retrying in")
    assert [(n.attempt, n.why) for n in notices] == [(1, "HTTP 503"), (2, "connection dropped")]


def test_a_closed_port_trips_the_breaker_after_three_connection_failures(
        cache: CallCache) -> None:
    url = closed_port_url()
    notices: list[RetryNotice] = []
    breaker = Breaker()
    spec = ModelSpec(alias="gone", provider="openai", model="m", base_url=url)
    with ModelClient(spec, cache, backoff=FAST, breaker=breaker,
                     on_retry=notices.append) as client:
        seconds, error = timed_failure(client, EndpointUnreachable)
    assert [notice.why for notice in notices] == ["connection failed"] * 2
    assert str(error).startswith(f"model endpoint {url} is unreachable: 3 connection attempts")
    assert breaker.tripped == str(error) and seconds < 1.0
    # every client sharing the breaker now fails at once, without a request
    with ScriptedServer(Script([{"content": "x"}])) as server:
        with ModelClient(server.spec(), cache, breaker=breaker) as other, \
                pytest.raises(Halt, match="is unreachable"):
            other.complete(ASK)
        assert server.count == 0


def test_only_connection_failures_in_a_row_count() -> None:
    breaker = Breaker(threshold=2)
    refused = ModelTransientError("refused", why=CONNECTION)
    breaker.failed("http://a/v1", refused)
    breaker.failed("http://a/v1", ModelTransientError("busy", why="HTTP 503"))
    breaker.failed("http://a/v1", refused)
    breaker.failed("http://b/v1", refused)
    assert breaker.tripped is None
    with pytest.raises(EndpointUnreachable, match="http://b/v1 is unreachable"):
        breaker.failed("http://b/v1", refused)
    assert breaker.tripped is not None


def test_a_refused_key_halts_every_client_sharing_the_breaker(
        cache: CallCache, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    breaker = Breaker()
    with ScriptedServer(Script([{"content": "x"}]), api_key="another-key") as server:
        with ModelClient(server.spec(key_env=KEY_ENV), cache, breaker=breaker) as client, \
                pytest.raises(KeyRefused, match=f"check {KEY_ENV}") as caught:
            client.complete(ASK)
        with ModelClient(server.spec("other"), cache, breaker=breaker) as other, \
                pytest.raises(Halt, match=KEY_ENV):
            other.complete(ASK)
        assert server.count == 1
    assert isinstance(caught.value, InputError) and isinstance(caught.value, Halt)
