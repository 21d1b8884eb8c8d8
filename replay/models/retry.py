"""The one retry wrapper: retries `ModelTransientError` only, with capped exponential backoff.

A server's Retry-After wins over the backoff (up to `max_retry_after`). After the last attempt
the transient error propagates; any other exception (a bug, an `InputError`) is never retried.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_random_exponential

from replay.models.transport import ModelTransientError

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """Waits between attempts: full-jitter exponential from `initial` up to `cap` seconds."""

    initial: float = 1.0
    cap: float = 60.0
    max_retry_after: float = 600.0


DEFAULT_BACKOFF = Backoff()


def retry_call(fn: Callable[[], T], *, max_attempts: int, backoff: Backoff = DEFAULT_BACKOFF) -> T:
    """Call `fn` up to `max_attempts` times while it raises `ModelTransientError`.

    Raises the last `ModelTransientError` when every attempt failed.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    jitter = wait_random_exponential(multiplier=backoff.initial, max=backoff.cap)

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        retry_after = getattr(error, "retry_after", None)
        if retry_after is not None:
            return min(retry_after, backoff.max_retry_after)
        return jitter(state)

    def log(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        seconds = state.next_action.sleep if state.next_action else 0.0
        logger.warning("%s; attempt %d of %d failed, retrying in %.1fs",
                       error, state.attempt_number, max_attempts, seconds)

    retrying = Retrying(
        retry=retry_if_exception_type(ModelTransientError),
        stop=stop_after_attempt(max_attempts),
        wait=wait,
        before_sleep=log,
        reraise=True,
    )
    return retrying(fn)
