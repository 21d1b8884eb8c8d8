"""A model's request and reply, with the reply's usage and cost: what the call cache keeps.

Messages stay plain JSON dicts in the OpenAI chat-completions format (`replay.models.types`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SCHEMA = 1


class Usage(BaseModel):
    """Tokens of one call. `input_tokens` counts the whole prompt, cached part included;
    `cached_tokens` of it were read from the provider's prompt cache and `cache_write_tokens`
    written to it (Anthropic reports writes; they cost more than plain input)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)


class ChatResponse(BaseModel):
    """The assistant's reply as an OpenAI-format message, with usage, cost and its origin.

    `message` has `role`, `content` (text or None) and, when the model called tools,
    `tool_calls`. `finish_reason` is the provider's own word (`stop`, `tool_calls`, `end_turn`,
    `tool_use`, `length`, `max_tokens`, ...). `cost` is what the original call cost, also when
    the reply comes from the cache; `latency` the seconds the original call took, its retries
    and waits included (None where it was not measured).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    message: dict[str, Any]
    usage: Usage
    cost: float = Field(ge=0)
    from_cache: bool = False
    finish_reason: str | None = None
    latency: float | None = None


@dataclass(frozen=True)
class Refusal:
    """A request a server refused for its content: its HTTP status, whether its context was too
    long, and what the server said."""

    status: int
    context: bool
    message: str


@dataclass(frozen=True)
class CallRequest:
    """One request to a model as the call cache keeps it: the model asked (its alias, provider,
    endpoint and name), the request as sent (the spec's settings applied) and the caller's seed
    index. `content` is everything that decides the reply: what its key is the digest of, and
    what is stored beside the reply (`replay.models.cache`)."""

    alias: str
    provider: str
    base_url: str
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    temperature: float | None
    max_tokens: int | None
    seed: int | None
    seed_index: int
    tool_choice: str | None = None
    extra_body: dict[str, Any] | None = None

    def content(self) -> dict[str, Any]:
        """What decides the reply, as a JSON value (`tool_choice` and `extra_body` only when
        set, as keys made before they existed had neither)."""
        content: dict[str, Any] = {
            "provider": self.provider, "base_url": self.base_url, "model": self.model,
            "messages": self.messages, "tools": self.tools, "temperature": self.temperature,
            "max_tokens": self.max_tokens, "seed": self.seed, "seed_index": self.seed_index,
        }
        if self.tool_choice is not None:
            content["tool_choice"] = self.tool_choice
        if self.extra_body:
            content["extra_body"] = self.extra_body
        return content
