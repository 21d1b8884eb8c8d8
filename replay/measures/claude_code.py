"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`) as sessions.

Each line is a record. What is read:

- `user` records: text becomes a user message, each `tool_result` block a tool message. A
  record with `isCompactSummary` (or, before that flag existed, a user text opening "This
  session is being continued from a previous conversation") is a compaction's summary.
- `assistant` records: one API response may be split over several records sharing
  `message.id`; their text and `tool_use` blocks become one assistant message, and the first
  record's `usage` is that request's (input = uncached + cache creation + cache read tokens,
  cached = cache read tokens).
- `system` records with subtype `compact_boundary`: the boundary, with its trigger.
- the first record's `cwd`: the session's working directory (paths are matched relative to it).

Left out: sidechain records (subagents), meta records, thinking blocks, and `summary` records
(the short titles Claude Code writes for its session list, not compactions).

Messages form a tree through `parentUuid` (a boundary bridges it with `logicalParentUuid`); a
request's messages extend the previous request's when its parent chain reaches that request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from replay.measures.sessions import Session
from replay.models.types import Message

CONTINUED = "This session is being continued from a previous conversation"
_SKIPPED_TYPES = {"summary", "file-history-snapshot", "queue-operation", "last-prompt", "progress"}


@dataclass
class _Chain:
    """Where records sit in the file and whom they follow, to check request prefixes."""

    parent: dict[str, str | None] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)
    last_request: set[str] = field(default_factory=set)
    last_request_start: int = -1

    def add(self, record: dict[str, Any], line: int) -> None:
        """Remember where a record sits and whom it follows."""
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            self.parent[uuid] = record.get("parentUuid") or record.get("logicalParentUuid")
            self.order[uuid] = line

    def extends_last(self, record: dict[str, Any]) -> bool:
        """Whether the record's ancestors reach the previous request's records."""
        if not self.last_request:
            return True
        current = record.get("parentUuid")
        while isinstance(current, str) and self.order.get(current, -1) >= self.last_request_start:
            if current in self.last_request:
                return True
            current = self.parent.get(current)
        return False


def read_claude_code(records: Iterable[tuple[int, dict[str, Any]]], source: str) -> Session:
    """The session of a Claude Code transcript (see the module docstring)."""
    reader = _Reader(Session(source, "claude-code"))
    for line, record in records:
        kind = record.get("type")
        reader.chain.add(record, line)
        if not reader.session.cwd and isinstance(record.get("cwd"), str):
            reader.session.cwd = record["cwd"]
        if kind in _SKIPPED_TYPES or record.get("isSidechain") or record.get("isMeta"):
            continue
        if kind == "system" and record.get("subtype") == "compact_boundary":
            metadata = record.get("compactMetadata") or record.get("compact_metadata") or {}
            reader.trigger = str(metadata.get("trigger") or "")
        elif kind == "user":
            reader.user(record)
        elif kind == "assistant":
            reader.assistant(record, line)
    return reader.session


@dataclass
class _Reader:
    session: Session
    chain: _Chain = field(default_factory=_Chain)
    trigger: str = ""
    response_id: str | None = None
    response: Message | None = None

    def user(self, record: dict[str, Any]) -> None:
        """A user record: text, tool results, or a compaction summary."""
        content = (record.get("message") or {}).get("content")
        text = _text(content)
        if record.get("isCompactSummary") or text.startswith(CONTINUED):
            self.session.add_compaction(text, self.trigger)
            self.trigger = ""
            return
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self.session.messages.append({
                    "role": "tool", "tool_call_id": block.get("tool_use_id"),
                    "content": _text(block.get("content"))})
        if text:
            self.session.messages.append({"role": "user", "content": text})

    def assistant(self, record: dict[str, Any], line: int) -> None:
        """One record of a response; the first record of a response is a request."""
        message = record.get("message") or {}
        identifier = str(message.get("id") or record.get("requestId") or record.get("uuid"))
        if identifier != self.response_id or self.response is None:
            usage = message.get("usage") or {}
            parts = [_int(usage.get(key)) for key in (
                "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
            total = sum(p or 0 for p in parts) if any(p is not None for p in parts) else None
            self.session.add_request(total, parts[2], prefix_ok=self.chain.extends_last(record))
            self.chain.last_request, self.chain.last_request_start = set(), line
            self.response_id, self.response = identifier, {"role": "assistant", "content": ""}
            self.session.messages.append(self.response)
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            self.chain.last_request.add(uuid)
        _add_blocks(self.response, message.get("content"))


def _add_blocks(target: Message, content: Any) -> None:
    """Append an assistant record's text and tool_use blocks to its message."""
    text = _text(content)
    if text:
        target["content"] = f"{target['content']}\n{text}" if target["content"] else text
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            target.setdefault("tool_calls", []).append({
                "id": block.get("id"), "type": "function",
                "function": {"name": str(block.get("name") or "tool"),
                             "arguments": json.dumps(block.get("input") or {})}})


def _text(content: Any) -> str:
    """The text of a content value: a string, or the text blocks of a list, joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [str(block.get("text") or "") for block in content
             if isinstance(block, dict) and block.get("type") == "text"]
    return "\n".join(text for text in texts if text)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
