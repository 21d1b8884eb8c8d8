"""Typed payloads of the models layer: a model's spec and a request (its reply and usage are
records, `replay.records.reply`, which the store keeps).

Messages and tools stay plain JSON dicts in the OpenAI chat-completions format: the message list
is the trajectory, and every other format is converted at the provider's edge.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from replay.core.limits import (
    MAX_DOLLARS,
    MAX_SECONDS,
    MAX_STEPS,
    MAX_TEMPERATURE,
    MAX_TOKENS,
    MAX_WORKERS,
)

if TYPE_CHECKING:  # the records of a reply: imported from `replay.records.reply`, not from here
    from replay.records.reply import ChatResponse, Usage

Message = dict[str, Any]
Tool = dict[str, Any]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Request fields replay sets itself, each from its own setting: extra_body may not name them.
OWN_FIELDS = ("model", "messages", "tools", "tool_choice", "temperature", "max_tokens", "seed",
              "system", "stream")
ToolChoice = Literal["auto", "required", "none"]
# What input read from a provider's prompt cache costs, as a share of `price_in`, where a spec
# sets no `price_cached_in`: Anthropic bills cache reads at 0.1x the base input price (its
# prompt caching docs, for every model); for OpenAI-compatible servers 0.5, the discount OpenAI
# announced with automatic prompt caching (newer models and other providers publish their own
# rates: the built-in aliases set them).
CACHE_READ_SHARE = {"anthropic": 0.1, "openai": 0.5, "gguf": 0.0}
# What input written to the prompt cache costs, as a share of `price_in`: Anthropic bills its
# 5-minute cache writes at 1.25x; OpenAI-compatible servers cache automatically and report no
# writes.
CACHE_WRITE_SHARE = {"anthropic": 1.25, "openai": 1.0, "gguf": 1.0}
GGUF_FIELDS = ("path", "threads", "decode_threads", "parallel", "gpu_layers", "chat_template",
               "widen", "flash_attn")


class ModelSpec(BaseModel):
    """One model behind one endpoint, with its key variable, window and list prices.

    `base_url` ends before the API path: `https://api.openai.com/v1` for OpenAI-compatible
    servers (`/chat/completions` is appended), `https://api.anthropic.com/v1` for Anthropic
    (`/messages` is appended). `key_env` names the environment variable holding the key; it is
    empty for local servers that take none. Prices are USD per million tokens; `price_cached_in`
    is the price of input read from the provider's prompt cache (None: `price_in` times
    `CACHE_READ_SHARE` of the provider). `deadline` is how
    many seconds one call to this model may take, all its retries included, when the command
    gives no `--call-deadline` (default 900, or `timeout` when that is longer).

    Request settings, for servers that need them: `temperature` and `max_tokens` override what
    the run asks for (a model that must run at a fixed temperature); `timeout` is how long one
    attempt waits for the server (default 600 s); `tool_choice` is sent with the tools (some
    servers, llama.cpp among them, ignore tools without it); `extra_body` fields are added to
    every request body as they are (`top_k`, `chat_template_kwargs`, ...), and may not name a
    field replay sets itself (`OWN_FIELDS`).

    Provider `gguf` is a GGUF file run in process by llama.cpp (`replay.models.gguf`): `path`
    is the file (or `package:MODULE/FILE` inside an installed package), `context_window` the
    context it is loaded with, `threads` (prompt threads), `decode_threads` (generation
    threads, default `threads`), `parallel` (requests decoded at once), `gpu_layers`,
    `chat_template` (a bundled template's name or a file; default the model's own), `widen`
    (`q8_0`: its Q4_1 weights widened once, `replay.models.gguf_widen`) and `flash_attn`
    (default llama.cpp's choice) how it runs. Its
    `base_url` is `gguf://FILE?n_ctx=N[&widen=W]` and `model` the file's stem unless given.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    alias: str = Field(min_length=1)
    provider: Literal["openai", "anthropic", "gguf"]
    model: str = Field(min_length=1)
    base_url: str
    key_env: str = ""
    context_window: int | None = Field(default=None, gt=0, le=MAX_TOKENS)
    price_in: float = Field(default=0.0, ge=0, le=MAX_DOLLARS)
    price_out: float = Field(default=0.0, ge=0, le=MAX_DOLLARS)
    price_cached_in: float | None = Field(default=None, ge=0, le=MAX_DOLLARS)
    temperature: float | None = Field(default=None, ge=0, le=MAX_TEMPERATURE)
    max_tokens: int | None = Field(default=None, gt=0, le=MAX_TOKENS)
    deadline: float | None = Field(default=None, gt=0, le=MAX_SECONDS)
    timeout: float | None = Field(default=None, gt=0, le=MAX_SECONDS)
    tool_choice: ToolChoice | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)
    label: str = ""  # a short name for reports (never part of a request or a cache key)
    path: str | None = None
    threads: int | None = Field(default=None, gt=0, le=MAX_WORKERS)
    decode_threads: int | None = Field(default=None, gt=0, le=MAX_WORKERS)
    parallel: int | None = Field(default=None, gt=0, le=MAX_WORKERS)
    gpu_layers: int | None = Field(default=None, ge=0, le=MAX_STEPS)
    chat_template: str | None = None
    widen: Literal["q8_0"] | None = None
    flash_attn: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _local_file(cls, data: Any) -> Any:
        """A gguf spec names its file; its model and base URL follow from it."""
        if not isinstance(data, dict):
            return data
        if data.get("provider") != "gguf":
            given = sorted(name for name in GGUF_FIELDS if data.get(name) is not None)
            if given:
                raise ValueError(f"{', '.join(given)}: only for provider gguf")
            return data
        path = data.get("path")
        if not isinstance(path, str) or not path.strip():
            raise ValueError("provider gguf needs path (the GGUF file)")
        name = path.rstrip("/").rpartition("/")[2]
        query = "&".join(f"{key}={data[field]}" for key, field in
                         (("n_ctx", "context_window"), ("widen", "widen")) if data.get(field))
        return {"model": name.removesuffix(".gguf"), **data,
                "base_url": f"gguf://{name}" + (f"?{query}" if query else "")}

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if value.startswith("gguf://"):
            return value
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {value!r}")
        if not urlsplit(value).hostname:
            raise ValueError(f"names no host: {value!r}")
        return value.rstrip("/")

    @field_validator("key_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if value and not _ENV_NAME.fullmatch(value):
            raise ValueError(f"not an environment variable name: {value!r}")
        return value

    @field_validator("extra_body")
    @classmethod
    def _extra_fields(cls, value: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(set(value) & set(OWN_FIELDS))
        if clash:
            raise ValueError(f"may not set {', '.join(clash)}: replay sets those itself "
                             "(temperature, max_tokens and tool_choice are settings of their own)")
        return value

    def request_settings(self) -> dict[str, Any]:
        """The settings that shape the requests' content, those set only (empty by default)."""
        found = self.model_dump(include={"temperature", "max_tokens", "tool_choice",
                                         "extra_body", "chat_template"}, exclude_defaults=True)
        return {name: value for name, value in found.items() if value is not None}

    def __hash__(self) -> int:  # extra_body is a dict: hash the spec by its JSON
        return hash(self.model_dump_json())

    def cached_price(self) -> float:
        """USD per million input tokens read from the provider's prompt cache."""
        if self.price_cached_in is not None:
            return self.price_cached_in
        return self.price_in * CACHE_READ_SHARE[self.provider]

    def cost(self, usage: Usage) -> float:
        """USD cost of one call with this usage at the spec's list prices: input read from the
        provider's prompt cache at the cached price, input written to it at the provider's
        write price, the rest of the prompt at `price_in`."""
        fresh = max(0, usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens)
        write_price = self.price_in * CACHE_WRITE_SHARE[self.provider]
        return (fresh * self.price_in + usage.cached_tokens * self.cached_price()
                + usage.cache_write_tokens * write_price
                + usage.output_tokens * self.price_out) / 1e6

    def saving(self, usage: Usage) -> float:
        """USD that prompt caching saved on one call: its cost with the whole prompt at
        `price_in`, minus its cost. Negative when cache writes were not read back."""
        uncached = (usage.input_tokens * self.price_in + usage.output_tokens * self.price_out)
        return uncached / 1e6 - self.cost(usage)


class ChatRequest(BaseModel):
    """One chat request, as its caller asks it; the model client applies the spec's settings
    (see `replay.models.client.settled`) before it is keyed and sent.

    `seed` is sent to OpenAI-compatible servers; Anthropic has none, so there it only shapes the
    cache key.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: list[Message] = Field(min_length=1)
    tools: list[Tool] = Field(default_factory=list)
    temperature: float | None = Field(default=None, ge=0, le=MAX_TEMPERATURE)
    max_tokens: int | None = Field(default=None, gt=0, le=MAX_TOKENS)
    seed: int | None = None
    tool_choice: ToolChoice | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)


class Provider(Protocol):
    """Something that answers chat requests: an HTTP provider or an in-process fake."""

    def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        """Answer one request within about `timeout` seconds; raises `ModelTransientError` for
        faults worth retrying."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class Model(Protocol):
    """What the agent and the summarizers need of a model: `ModelClient` and the scripted
    fakes fit."""

    def complete(self, request: ChatRequest, seed_index: int = 0) -> ChatResponse: ...
