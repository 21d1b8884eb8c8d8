"""What the real APIs reject with HTTP 400, checked by the scripted server.

Only the rules a converter can break are checked: roles, alternation, tool calls answered by
tool results with matching ids, required fields, at most four prompt cache breakpoints. Each
check returns the problem or None.
"""

from __future__ import annotations

from typing import Any

MAX_CACHE_MARKS = 4  # the Messages API's limit of prompt cache breakpoints


def openai_problem(body: dict[str, Any]) -> str | None:
    """Why a chat-completions body would be rejected, or None."""
    if not isinstance(body.get("model"), str):
        return "model: field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: a non-empty list is required"
    pending: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"messages[{index}]: invalid role {role!r}"
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                return (f"messages[{index}]: messages with role 'tool' must be a response to a "
                        "preceding message with 'tool_calls'")
            pending.remove(message["tool_call_id"])
            continue
        if pending:
            return (f"messages[{index}]: an assistant message with 'tool_calls' must be followed "
                    f"by tool messages responding to each 'tool_call_id' ({pending} missing)")
        if role == "assistant":
            pending = [call.get("id") for call in message.get("tool_calls") or []]
    if pending:
        return f"tool calls {pending} are never answered by tool messages"
    return None


def anthropic_problem(body: dict[str, Any]) -> str | None:
    """Why a Messages API body would be rejected, or None."""
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict) or "name" not in tool or "input_schema" not in tool:
            return "tools: each tool needs name and input_schema"
    marks = _cache_marks(body)
    if marks > MAX_CACHE_MARKS:
        return (f"A maximum of {MAX_CACHE_MARKS} blocks with cache_control may be provided. "
                f"Found {marks}.")
    tool_uses: set[str] = set()
    for index, message in enumerate(messages):
        problem = _turn_problem(index, message, tool_uses)
        if problem:
            return problem
        tool_uses = {block["id"] for block in message["content"] if block["type"] == "tool_use"} \
            if isinstance(message["content"], list) else set()
    return None


def _cache_marks(body: dict[str, Any]) -> int:
    """How many tools, system blocks and message blocks carry `cache_control`."""
    system = body.get("system") if isinstance(body.get("system"), list) else []
    blocks = [*(body.get("tools") or []), *system]
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        blocks += content if isinstance(content, list) else []
    return sum(1 for block in blocks if isinstance(block, dict) and "cache_control" in block)


def _turn_problem(index: int, message: Any, tool_uses: set[str]) -> str | None:
    expected = "user" if index % 2 == 0 else "assistant"
    role = message.get("role") if isinstance(message, dict) else None
    if role != expected:
        return (f"messages.{index}: roles must alternate between user and assistant starting "
                f"with user; got {role!r}")
    content = message.get("content")
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list) and content:
        blocks = content
    else:
        return f"messages.{index}: content must be a string or a non-empty list of blocks"
    results: set[str] = set()
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and not block.get("text"):
            return f"messages.{index}: text content blocks must be non-empty"
        if kind == "tool_use" and (role != "assistant" or not block.get("id")):
            return f"messages.{index}: tool_use blocks belong to assistant turns and need an id"
        if kind == "tool_result":
            results.add(str(block.get("tool_use_id")))
        if kind not in ("text", "tool_use", "tool_result"):
            return f"messages.{index}: unknown content block type {kind!r}"
    if results - tool_uses:
        unexpected = sorted(results - tool_uses)
        return f"messages.{index}: unexpected tool_use_id in tool_result: {unexpected}"
    if tool_uses - results:
        return (f"messages.{index}: tool_use ids were found without tool_result blocks "
                f"immediately after: {sorted(tool_uses - results)}")
    return None
