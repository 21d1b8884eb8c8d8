"""The OpenAI chat-completions wire format: OpenAI, and every compatible server (Kimi, DeepSeek,
Qwen/DashScope, GLM, Gemini's compatible endpoint, vLLM, SGLang, Ollama)."""

from __future__ import annotations

import json
from typing import Any

from replay.models.keys import api_key
from replay.models.transport import JsonTransport, malformed
from replay.models.types import ChatRequest, Message, ModelSpec
from replay.records.reply import ChatResponse, Usage


class OpenAIProvider:
    """Sends canonical requests as they are and normalises the assistant message of the reply.

    Raises `InputError` at construction when the spec's key variable is unset.
    """

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        key = api_key(spec)
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self._transport = JsonTransport(spec, headers)

    def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        """Send one request, waiting at most about `timeout` seconds; the request's temperature,
        max_tokens, seed and tool_choice are sent if set, and its extra body fields."""
        body = self._transport.post("/chat/completions", request_body(self.spec, request),
                                    timeout)
        return parse_reply(self.spec, body)

    def close(self) -> None:
        """Close the connection pool."""
        self._transport.close()


def request_body(spec: ModelSpec, request: ChatRequest) -> dict[str, Any]:
    """The JSON body of a chat-completions request."""
    return {**request.extra_body, "model": spec.model, "messages": sendable(request.messages),
            **request_settings(request)}


def request_settings(request: ChatRequest) -> dict[str, Any]:
    """The tools and sampling settings of a chat-completions body (those that are set)."""
    settings: dict[str, Any] = {"tools": request.tools} if request.tools else {}
    for name in ("temperature", "max_tokens", "seed", "tool_choice"):
        value = getattr(request, name)
        if value is not None:
            settings[name] = value
    return settings


def sendable(messages: list[Message]) -> list[Message]:
    """`messages` with content "" where one that calls tools has none: every OpenAI-compatible
    server takes "", and llama-cpp-python's answers HTTP 500 to null (six retries, then the cell
    is an error on every re-run)."""
    return [{**message, "content": ""} if message.get("content") is None and
            message.get("tool_calls") else message for message in messages]


def parse_reply(spec: ModelSpec, body: dict[str, Any]) -> ChatResponse:
    """A chat-completions response body as a `ChatResponse`."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise malformed(spec, "no choices")
    choice = choices[0]
    raw_message = choice.get("message")
    if not isinstance(raw_message, dict):
        raise malformed(spec, "a choice without a message")
    usage = parse_usage(body.get("usage"))
    finish = choice.get("finish_reason")
    return ChatResponse(
        message=assistant_message(spec, raw_message),
        usage=usage,
        cost=spec.cost(usage),
        finish_reason=str(finish) if finish is not None else None,
    )


def assistant_message(spec: ModelSpec, raw: dict[str, Any]) -> Message:
    """Keep role, content and tool calls; drop provider extras (refusal, reasoning, ...)."""
    content = raw.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    if content is not None and not isinstance(content, str):
        raise malformed(spec, "message content is neither text nor null")
    message: Message = {"role": "assistant", "content": content}
    raw_calls = raw.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise malformed(spec, "tool_calls is not a list")
    calls = [_tool_call(spec, call, index) for index, call in enumerate(raw_calls)]
    if calls:
        message["tool_calls"] = calls
    return message


def _tool_call(spec: ModelSpec, raw: Any, index: int) -> dict[str, Any]:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise malformed(spec, f"tool call {index} has no function name")
    arguments = function.get("arguments")
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": str(raw.get("id") or f"call_{index}"),
        "type": "function",
        "function": {"name": function["name"], "arguments": arguments},
    }


def parse_usage(raw: Any) -> Usage:
    """Token counts; cached tokens as OpenAI, DeepSeek or Moonshot report them."""
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("prompt_tokens_details")
    cached = (
        (details.get("cached_tokens") if isinstance(details, dict) else None)
        or raw.get("prompt_cache_hit_tokens")
        or raw.get("cached_tokens")
    )
    return Usage(
        input_tokens=_count(raw.get("prompt_tokens")),
        output_tokens=_count(raw.get("completion_tokens")),
        cached_tokens=_count(cached),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
