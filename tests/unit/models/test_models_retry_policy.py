"""The retry policy itself (tenacity's, with replay's Retry-After, time left and deadline), on
in-process calls that fail as a model server's do."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from replay.models.retry import Backoff, ModelDeadlineExceeded, RetryNotice, retry_call
from replay.models.transport import ModelTransientError


def failing(times: int, retry_after: float | None = None,
            seconds: float = 0.0) -> tuple[Callable[[float], str], list[float]]:
    """A call that fails `times` times (HTTP 503), taking `seconds` each (at most the time left
    it is given, as a request's timeout), then answers; and the time left of each attempt."""
    given: list[float] = []

    def call(left: float) -> str:
        given.append(left)
        time.sleep(max(0.0, min(seconds, left)))
        if len(given) <= times:
            raise ModelTransientError("busy", why="HTTP 503", retry_after=retry_after)
        return "answer"

    return call, given


def test_waits_are_full_jitter_exponential_up_to_the_cap() -> None:
    notices: list[RetryNotice] = []
    call, given = failing(5)
    assert retry_call(call, model="m", endpoint="e", max_attempts=6,
                      backoff=Backoff(initial=0.01, cap=0.04), on_retry=notices.append) == "answer"
    assert [n.attempt for n in notices] == [1, 2, 3, 4, 5] and len(given) == 6
    bounds = [0.01, 0.02, 0.04, 0.04, 0.04]
    assert all(0 <= n.wait <= bound for n, bound in zip(notices, bounds, strict=True))


def test_retry_after_wins_over_the_backoff_up_to_its_cap() -> None:
    notices: list[RetryNotice] = []
    call, _ = failing(1, retry_after=30)
    started = time.monotonic()
    retry_call(call, model="m", endpoint="e", max_attempts=2,
               backoff=Backoff(initial=5, cap=5, max_retry_after=0.2), on_retry=notices.append)
    assert [n.wait for n in notices] == [0.2] and time.monotonic() - started >= 0.2


def test_one_deadline_across_attempts_each_given_the_time_left() -> None:
    call, given = failing(100, seconds=0.3)
    started = time.monotonic()
    with pytest.raises(ModelDeadlineExceeded, match=r"1 s call deadline \(\d attempt\(s\)"):
        retry_call(call, model="m", endpoint="e", max_attempts=100,
                   backoff=Backoff(initial=0.01, cap=0.01), deadline=1.0, on_retry=lambda n: None)
    assert time.monotonic() - started < 1.0 + 0.5
    assert given == sorted(given, reverse=True) and given[0] <= 1.0 and len(given) >= 3


def test_the_last_attempts_error_propagates() -> None:
    call, given = failing(10)
    with pytest.raises(ModelTransientError, match="busy"):
        retry_call(call, model="m", endpoint="e", max_attempts=3,
                   backoff=Backoff(initial=0.001, cap=0.001), on_retry=lambda n: None)
    assert len(given) == 3
