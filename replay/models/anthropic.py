"""The Anthropic Messages API: canonical (OpenAI-format) messages in, an OpenAI-format reply out.

Conversion: system messages join into the top-level `system`; assistant tool calls become
`tool_use` blocks; tool messages become `tool_result` blocks in a user turn; consecutive turns of
one role merge (the API wants strict alternation); empty messages are dropped. Tool call ids are
reduced to the characters the API accepts, the same way on both sides of a call. Arguments that
are not a JSON object are passed as `{"raw_arguments": text}`.

Prompt caching: every request marks at most four `cache_control` breakpoints (the API's limit),
so that the provider caches the prefix up to each and a later request sharing it reads it back
at a tenth of the input price (`breakpoints`). A prefix shorter than the model's minimum is
simply not cached; the marks change neither the prompt nor the call cache's key.
"""

from __future__ import annotations

import json
import re
from typing import Any

from replay.core.errors import InputError
from replay.models.keys import api_key
from replay.models.transport import JsonTransport, malformed
from replay.models.types import ChatRequest, Message, ModelSpec, Tool
from replay.records.reply import ChatResponse, Usage

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192  # the API requires max_tokens; used when neither request nor spec set it
TOOL_CHOICE = {"auto": "auto", "required": "any", "none": "none"}  # OpenAI's words, Anthropic's
EPHEMERAL = {"type": "ephemeral"}  # a 5-minute prompt cache breakpoint
MAX_BREAKPOINTS = 4

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


class AnthropicProvider:
    """Speaks the Messages API; raises `InputError` at construction when the key is unset."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        headers = {"anthropic-version": API_VERSION}
        key = api_key(spec)
        if key:
            headers["x-api-key"] = key
        self._transport = JsonTransport(spec, headers)

    def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        """Send one request, waiting at most about `timeout` seconds; `seed` is not sent (the API
        has none); tool_choice `required` is sent as Anthropic's `any`."""
        body = self._transport.post("/messages", request_body(self.spec, request), timeout)
        return parse_reply(self.spec, body)

    def close(self) -> None:
        """Close the connection pool."""
        self._transport.close()


def request_body(spec: ModelSpec, request: ChatRequest) -> dict[str, Any]:
    """The JSON body of a Messages API request, with its prompt cache breakpoints."""
    system, messages = convert_messages(request.messages)
    body: dict[str, Any] = {
        **request.extra_body,
        "model": spec.model,
        "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": messages,
    }
    if system:
        body["system"] = [{"type": "text", "text": system}]
    if request.tools:
        body["tools"] = [convert_tool(tool) for tool in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = {"type": TOOL_CHOICE[request.tool_choice]}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    for block in breakpoints(body, _block_count(request.messages[:-1])):
        block["cache_control"] = dict(EPHEMERAL)
    return body


def breakpoints(body: dict[str, Any], earlier_blocks: int) -> list[dict[str, Any]]:
    """The blocks of `body` to mark as prompt cache breakpoints, at most `MAX_BREAKPOINTS`.

    The API caches tools, then system, then messages, and finds a cached prefix at a breakpoint
    or up to 20 blocks before one. Marked, in this order:
    - the system text (or the last tool when there is none): the head every request of an
      agent shares, PRE or POST, whatever follows;
    - the last block of the request: what the next agent step resends and extends;
    - the last block of the turn two turns back, where the previous agent step's request ended
      (the tool results before the model's reply), so a step reads it however many blocks the
      reply and its results added;
    - the last block of all messages but the last (`earlier_blocks` of them): the history that
      a summarizer's prompt follows, shared by the summaries of one history and with PRE.
    """
    marks: list[dict[str, Any]] = []
    head = body.get("system") or body.get("tools") or []
    if head:
        marks.append(head[-1])
    blocks = [block for turn in body["messages"] for block in turn["content"]]
    chosen = [blocks[-1]]
    if len(body["messages"]) >= 3:
        chosen.append(body["messages"][-3]["content"][-1])
    if earlier_blocks:
        chosen.append(blocks[earlier_blocks - 1])
    for block in chosen:
        if all(block is not mark for mark in marks):
            marks.append(block)
    return marks[:MAX_BREAKPOINTS]


def _block_count(messages: list[Message]) -> int:
    """How many message blocks `messages` become (their system text aside)."""
    return sum(len(turn["content"]) for turn in convert_messages(messages)[1]) if messages else 0


def convert_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """OpenAI-format messages as (system text, Messages API turns)."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role in ("system", "developer"):
            text = _text(message.get("content"), index)
            if text:
                system.append(text)
        elif role == "user":
            _append(turns, "user", _text_blocks(message.get("content"), index))
        elif role == "assistant":
            blocks = _text_blocks(message.get("content"), index)
            blocks += [_tool_use(call, index) for call in message.get("tool_calls") or []]
            _append(turns, "assistant", blocks)
        elif role == "tool":
            _append(turns, "user", [_tool_result(message, index)])
        else:
            raise InputError(f"message {index}: unknown role {role!r}")
    return "\n\n".join(system), turns


def convert_tool(tool: Tool) -> dict[str, Any]:
    """An OpenAI function tool as an Anthropic tool."""
    function = tool.get("function") if tool.get("type", "function") == "function" else None
    if not isinstance(function, dict) or not function.get("name"):
        raise InputError(f"not an OpenAI function tool: {json.dumps(tool)[:200]}")
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }


def parse_reply(spec: ModelSpec, body: dict[str, Any]) -> ChatResponse:
    """A Messages API response body as a `ChatResponse` with an OpenAI-format message."""
    content = body.get("content")
    if not isinstance(content, list):
        raise malformed(spec, "no content list")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            if not isinstance(block.get("name"), str) or not block.get("id"):
                raise malformed(spec, "tool_use block without id or name")
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append({
                "id": str(block["id"]),
                "type": "function",
                "function": {"name": block["name"], "arguments": arguments},
            })
    message: Message = {"role": "assistant", "content": "\n\n".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    usage = parse_usage(body.get("usage"))
    stop = body.get("stop_reason")
    return ChatResponse(
        message=message,
        usage=usage,
        cost=spec.cost(usage),
        finish_reason=str(stop) if stop is not None else None,
    )


def parse_usage(raw: Any) -> Usage:
    """Token counts: the prompt total adds the prompt cache's reads
    (`cache_read_input_tokens`) and writes (`cache_creation_input_tokens`) to the input the
    API counts apart from them (`input_tokens`)."""
    if not isinstance(raw, dict):
        return Usage()

    def count(name: str) -> int:
        value = raw.get(name)
        return value if isinstance(value, int) and value >= 0 else 0

    cached, written = count("cache_read_input_tokens"), count("cache_creation_input_tokens")
    return Usage(
        input_tokens=count("input_tokens") + cached + written,
        output_tokens=count("output_tokens"),
        cached_tokens=cached,
        cache_write_tokens=written,
    )


def safe_id(tool_call_id: Any) -> str:
    """A tool call id in the characters the Messages API accepts (Kimi's `functions.x:0` etc.)."""
    return _UNSAFE_ID.sub("_", str(tool_call_id)) or "call"


def _append(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if not blocks:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def _text(content: Any, index: int) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise InputError(f"message {index}: content part {kind!r} is not supported")
            parts.append(str(part.get("text", "")))
        return "".join(parts)
    raise InputError(f"message {index}: content must be text, a list of parts or null")


def _text_blocks(content: Any, index: int) -> list[dict[str, Any]]:
    text = _text(content, index)
    return [{"type": "text", "text": text}] if text else []


def _tool_use(call: Any, index: int) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not function.get("name"):
        raise InputError(f"message {index}: a tool call without a function name")
    raw = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        arguments = {"raw_arguments": raw}
    return {"type": "tool_use", "id": safe_id(call.get("id")), "name": function["name"],
            "input": arguments}


def _tool_result(message: Message, index: int) -> dict[str, Any]:
    if not message.get("tool_call_id"):
        raise InputError(f"message {index}: a tool message without tool_call_id")
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": safe_id(message["tool_call_id"])}
    text = _text(message.get("content"), index)
    if text:
        block["content"] = text
    return block
