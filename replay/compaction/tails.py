"""What a native carrier keeps of a history: token counts and the kept tail or recent users.

Tokens here are characters / 4. A kept tail never starts inside a tool call and its results.
"""

from __future__ import annotations

from replay.models.types import Message


def tokens(message: Message) -> int:
    """A rough token count of a message: characters / 4."""
    size = len(str(message.get("content") or ""))
    size += sum(len(str(call.get("function", {}))) for call in message.get("tool_calls") or [])
    return size // 4


def kept_tail(history: list[Message], budget: int) -> list[Message]:
    """The longest run of last messages within `budget` tokens that starts at a clean turn."""
    body = [m for m in history if m.get("role") != "system"]
    start, used = len(body), 0
    while start > 0 and used + tokens(body[start - 1]) <= budget:
        start -= 1
        used += tokens(body[start])
    while start < len(body) and body[start].get("role") == "tool":
        start += 1
    return body[start:]


def recent_users(history: list[Message], budget: int) -> list[Message]:
    """The most recent user messages within `budget` tokens, in their order."""
    kept: list[Message] = []
    used = 0
    for message in reversed([m for m in history if m.get("role") == "user"]):
        used += tokens(message)
        if used > budget:
            break
        kept.insert(0, message)
    return kept
