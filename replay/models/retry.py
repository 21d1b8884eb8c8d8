"""The one retry wrapper of model calls. The policy is tenacity's: up to `max_attempts`
attempts, full-jitter exponential waits, a stop before a wait that would end past the call's one
deadline, a notice before each retry. What tenacity lacks is here: which faults are retried (only
`ModelTransientError`; a `Halt` trips the breaker; nothing else is retried), a server's
Retry-After over the backoff, the time left given to each attempt, `ModelDeadlineExceeded` (a
harness fault: the cell is `error`, retried next run) when the deadline stops the call, and the
breaker. After the last attempt the transient error propagates.

The breaker counts connection failures in a row per endpoint (refused, unreachable: not HTTP
errors, which prove the server is there). At `threshold` it trips and the call fails with
`EndpointUnreachable`. Any `Halt` (that, or a refused key) trips it: from then on every call
through a client that shares the breaker fails at once, so a sweep stops instead of failing each
of its cells in turn.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_random_exponential,
)

from replay.core.errors import Halt, HarnessError
from replay.models.transport import CONNECTION, ModelTransientError

logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_DEADLINE = 900.0  # seconds one model call may take, all its attempts and waits included
BREAKER_THRESHOLD = 3  # connection failures in a row that make an endpoint unreachable


@dataclass(frozen=True)
class Backoff:
    """Waits between attempts: full-jitter exponential from `initial` up to `cap` seconds, or
    the server's Retry-After (up to `max_retry_after`); a tenacity wait strategy."""

    initial: float = 1.0
    cap: float = 60.0
    max_retry_after: float = 600.0

    def __call__(self, state: RetryCallState) -> float:
        """Seconds to wait after the attempt `state` describes failed."""
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, ModelTransientError) and error.retry_after is not None:
            return min(error.retry_after, self.max_retry_after)
        return wait_random_exponential(multiplier=self.initial, max=self.cap)(state)


DEFAULT_BACKOFF = Backoff()


@dataclass(frozen=True)
class RetryNotice:
    """A failed attempt of a model call that is about to be retried."""

    model: str
    endpoint: str
    attempt: int
    max_attempts: int
    why: str
    wait: float

    def __str__(self) -> str:
        return (f"model {self.model!r} at {self.endpoint}: attempt {self.attempt} of "
                f"{self.max_attempts} failed ({self.why}), retrying in {self.wait:.1f}s")


class ModelDeadlineExceeded(HarnessError):
    """A model call got no answer before its deadline, all attempts included."""


class EndpointUnreachable(Halt):
    """Connections to a model endpoint failed `threshold` times in a row."""


class Breaker:
    """Connection failures in a row per endpoint, and the first fault that halted the command.

    Thread-safe; share one between the clients (and threads) of one command.
    """

    def __init__(self, threshold: int = BREAKER_THRESHOLD) -> None:
        self.threshold = threshold
        self.tripped: str | None = None
        self._failures: dict[str, int] = {}
        self._lock = threading.Lock()
        self._halted = threading.Event()

    def check(self) -> None:
        """Raise `Halt` once the breaker has tripped."""
        if self.tripped is not None:
            raise Halt(self.tripped)

    def trip(self, reason: str) -> None:
        """Halt every call from now on; the first reason is kept."""
        with self._lock:
            if self.tripped is None:
                self.tripped = reason
        self._halted.set()

    def failed(self, endpoint: str, error: ModelTransientError) -> None:
        """Count a failed attempt; raise `EndpointUnreachable` when it trips the breaker."""
        with self._lock:
            failures = self._failures[endpoint] = (
                self._failures.get(endpoint, 0) + 1 if error.why == CONNECTION else 0)
        if failures >= self.threshold:
            unreachable = EndpointUnreachable(
                f"model endpoint {endpoint} is unreachable: {failures} connection attempts in a "
                f"row failed, the last: {error}")
            self.trip(str(unreachable))
            raise unreachable from error

    def answered(self, endpoint: str) -> None:
        """The endpoint answered: its count starts again."""
        with self._lock:
            self._failures[endpoint] = 0

    def sleep(self, seconds: float) -> None:
        """Wait `seconds`, or less when the breaker trips meanwhile."""
        self._halted.wait(seconds)


def retry_call(fn: Callable[[float], T], *, model: str, endpoint: str, max_attempts: int,
               backoff: Backoff = DEFAULT_BACKOFF, deadline: float = DEFAULT_DEADLINE,
               breaker: Breaker | None = None,
               on_retry: Callable[[RetryNotice], None] | None = None) -> T:
    """Call `fn(seconds_left)` until it returns, while it raises `ModelTransientError`.

    `model` and `endpoint` name the call in notices and errors. `on_retry` hears of each retry
    (the default logs a warning). Raises `ModelDeadlineExceeded` when `deadline` seconds pass,
    `EndpointUnreachable` or `Halt` when the breaker trips, and the last `ModelTransientError`
    when every attempt failed.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    breaker = breaker or Breaker()
    end = time.monotonic() + deadline

    def attempt() -> T:
        breaker.check()
        try:
            result = fn(end - time.monotonic())
        except ModelTransientError as error:
            breaker.failed(endpoint, error)
            raise
        except Halt as halt:
            breaker.trip(str(halt))
            raise
        breaker.answered(endpoint)
        return result

    def announce(state: RetryCallState) -> None:
        (on_retry or _log)(RetryNotice(model, endpoint, state.attempt_number, max_attempts,
                                       _failure(state).why, state.upcoming_sleep))

    def give_up(state: RetryCallState) -> T:
        error = _failure(state)
        pause = state.upcoming_sleep if state.attempt_number < max_attempts else 0.0
        if (state.seconds_since_start or 0.0) + pause >= deadline:
            raise ModelDeadlineExceeded(
                f"model {model!r} at {endpoint}: no answer within the {deadline:g} s call "
                f"deadline ({state.attempt_number} attempt(s), the last: {error.why})") from error
        raise error

    return Retrying(
        retry=retry_if_exception_type(ModelTransientError), wait=backoff,
        stop=stop_after_attempt(max_attempts) | stop_before_delay(deadline),
        before_sleep=announce, retry_error_callback=give_up, sleep=breaker.sleep)(attempt)


def _failure(state: RetryCallState) -> ModelTransientError:
    error = state.outcome.exception() if state.outcome else None
    assert isinstance(error, ModelTransientError), "only transient errors are retried"
    return error


def _log(notice: RetryNotice) -> None:
    logger.warning("%s", notice)
