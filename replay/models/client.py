"""The one entry point for model calls: the spec's settings applied, cache lookup, provider call
with retries, record, return. Refusals are recorded too, and answered from the store."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from replay.models.cache import CallCache, call_request, refusal_key, request_key
from replay.models.retry import (
    DEFAULT_BACKOFF,
    DEFAULT_DEADLINE,
    Backoff,
    Breaker,
    RetryNotice,
    retry_call,
)
from replay.models.transport import ModelRefused
from replay.models.types import ChatRequest, ModelSpec, Provider
from replay.records.reply import CallRequest, ChatResponse
from replay.records.spend import Spend

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 600.0  # seconds one attempt waits for the server, unless the spec says
# A server that counts fewer prompt tokens than this share of replay's own estimate (content at
# four characters a token) lost part of the prompt: llama-cpp-python's template dropped the
# tool-call messages of a summary request, 9,147 tokens counted for a 23,320-token history.
PROMPT_LOSS_SHARE = 0.5


@dataclass
class ClientStats(Spend):
    """What one client did: provider calls with their spend (tokens, cost and what the
    provider's prompt cache saved, see `Spend`); `cache_hits` are replies replayed from the
    call cache, which cost nothing."""

    calls: int = 0
    cache_hits: int = 0
    refusals: int = 0


def make_provider(spec: ModelSpec) -> Provider:
    """The provider for `spec` (HTTP, or llama.cpp in process for gguf); raises `InputError`
    when its key variable is unset or its GGUF file cannot be loaded."""
    if spec.provider == "anthropic":
        from replay.models.anthropic import AnthropicProvider

        return AnthropicProvider(spec)
    if spec.provider == "gguf":
        from replay.models.gguf import GGUFProvider

        return GGUFProvider(spec)
    from replay.models.openai import OpenAIProvider

    return OpenAIProvider(spec)


def settled(spec: ModelSpec, request: ChatRequest, seed_index: int) -> ChatRequest:
    """`request` as it goes to `spec`: the spec's temperature and max_tokens win over the
    request's, its tool_choice goes with the tools and its extra body fields are added; an
    OpenAI-compatible server and a GGUF model get the sample index as their `seed` (Anthropic's
    API has none)."""
    update: dict[str, object] = {name: getattr(spec, name) for name in ("temperature", "max_tokens")
                                 if getattr(spec, name) is not None}
    if spec.tool_choice is not None and request.tools and request.tool_choice is None:
        update["tool_choice"] = spec.tool_choice
    if spec.extra_body:
        update["extra_body"] = {**spec.extra_body, **request.extra_body}
    if spec.provider in ("openai", "gguf") and request.seed is None:
        update["seed"] = seed_index
    return request.model_copy(update=update)


def call_key(spec: ModelSpec, request: ChatRequest, seed_index: int) -> str:
    """The key the reply to `request`, sent to `spec` for sample `seed_index`, is kept under in
    the model call cache."""
    return request_key(call_request(spec, settled(spec, request, seed_index), seed_index))


class ModelClient:
    """Calls one model through the cache. Thread-safe.

    The provider (and so the key lookup) is created at the first cache miss: a re-run answered
    entirely from the cache needs no key. `provider` replaces the HTTP provider (for fakes).

    A call may take `deadline` seconds, all attempts included (None: the spec's `deadline`, else
    `DEFAULT_DEADLINE` or the attempt timeout when that is longer), each attempt at most
    `timeout` of them (None: the spec's `timeout`, else `DEFAULT_TIMEOUT`). `breaker` is shared
    with the other clients of a command (see `replay.models.retry`); `on_retry` hears of each
    retry.
    """

    def __init__(
        self,
        spec: ModelSpec,
        cache: CallCache,
        *,
        max_attempts: int = 6,
        backoff: Backoff = DEFAULT_BACKOFF,
        timeout: float | None = None,
        deadline: float | None = None,
        breaker: Breaker | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        provider: Provider | None = None,
    ) -> None:
        self.spec = spec
        self.cache = cache
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.timeout = timeout or spec.timeout or DEFAULT_TIMEOUT
        self.deadline = deadline or spec.deadline or max(DEFAULT_DEADLINE, self.timeout)
        self.breaker = breaker or Breaker()
        self.on_retry = on_retry
        self.stats = ClientStats()
        self._provider = provider
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest, seed_index: int = 0) -> ChatResponse:
        """The reply to `request` for sample `seed_index`, from the cache or the model.

        The reply is stored before it is returned. Raises `ModelTransientError` when every
        attempt failed and `ModelDeadlineExceeded` when the deadline passed (both
        `HarnessError`), `ModelRefused` for a request the server refuses for its content (kept,
        and raised again for the same request at any seed without sending it), `InputError` for
        a missing key, and `Halt` for a refused key (`KeyRefused`), a model not found, an
        unreachable endpoint or a tripped breaker.
        """
        request = settled(self.spec, request, seed_index)
        asked = call_request(self.spec, request, seed_index)
        key = request_key(asked)
        cached = self.cache.get(key)
        if cached is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return cached
        refused = self.cache.refusal(refusal_key(asked))
        if refused is not None:
            with self._lock:
                self.stats.refusals += 1
            raise refused
        response = self._send(request, asked)
        self.cache.put(key, asked, response)
        self._count(response)
        _warn_prompt_loss(self.spec, request, response)
        logger.debug("model %s: %d in (%d cached), %d out, $%.4f", self.spec.alias,
                     response.usage.input_tokens, response.usage.cached_tokens,
                     response.usage.output_tokens, response.cost)
        return response

    def _send(self, request: ChatRequest, asked: CallRequest) -> ChatResponse:
        provider = self._get_provider()
        started = time.monotonic()
        try:
            response = retry_call(
                lambda left: provider.complete(request, timeout=min(self.timeout, left)),
                model=self.spec.alias, endpoint=self.spec.base_url,
                max_attempts=self.max_attempts, backoff=self.backoff, deadline=self.deadline,
                breaker=self.breaker, on_retry=self.on_retry,
            )
            return response.model_copy(update={"latency": time.monotonic() - started})
        except ModelRefused as refused:
            self.cache.keep_refusal(refusal_key(asked), asked, refused)
            with self._lock:
                self.stats.refusals += 1
            raise

    def close(self) -> None:
        """Close the provider's connections (the cache belongs to the caller)."""
        if self._provider is not None:
            self._provider.close()

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _get_provider(self) -> Provider:
        with self._lock:
            if self._provider is None:
                self._provider = make_provider(self.spec)
            return self._provider

    def _count(self, response: ChatResponse) -> None:
        with self._lock:
            self.stats.calls += 1
            self.stats.input_tokens += response.usage.input_tokens
            self.stats.output_tokens += response.usage.output_tokens
            self.stats.cached_tokens += response.usage.cached_tokens
            self.stats.cache_write_tokens += response.usage.cache_write_tokens
            self.stats.cost += response.cost
            self.stats.saved += self.spec.saving(response.usage)


def _warn_prompt_loss(spec: ModelSpec, request: ChatRequest, response: ChatResponse) -> None:
    """Warn when the server counted far fewer prompt tokens than the request holds."""
    counted = response.usage.input_tokens
    estimate = sum(len(str(message.get("content") or ""))
                   + sum(len(str(call.get("function", {})))
                         for call in message.get("tool_calls") or [])
                   for message in request.messages) // 4
    if counted and estimate > 200 and counted < estimate * PROMPT_LOSS_SHARE:
        logger.warning("model %s counted %d prompt tokens for a request replay estimates at "
                       "%d: its chat template probably drops messages (tool calls or tool "
                       "results are the usual ones); check its template", spec.alias, counted,
                       estimate)
