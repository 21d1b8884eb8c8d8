"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as sessions.

Each line is `{"timestamp", "type", "payload"}` (older rollouts write the item itself, after a
first line of session metadata). What is read:

- `session_meta`: the working directory (`cwd`; paths are matched relative to it);
- `response_item` messages of the user and the assistant (developer and system instructions
  are left out), tool calls (`function_call`, `custom_tool_call` such as `apply_patch`,
  `local_shell_call`) and their outputs;
- `compacted`: a boundary and its summary (`message`, or, when that is empty, the user message
  of `replacement_history` that opens with Codex's summary prefix); a remote compaction keeps
  no readable summary, and is a boundary with an empty one;
- `event_msg` `token_count`: the request that produced the response just read, with
  `last_token_usage` (input tokens include the cached ones; a count of zero input, repeated
  after a compaction, is no request); `thread_rolled_back` breaks the prefix of the next
  request.

A rollout is append-only, so a request's messages extend the previous request's unless the
thread was rolled back in between.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from replay.measures.sessions import Session

SUMMARY_PREFIX = "Another language model started to solve this problem"
_WRAPPED = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
_TEXT_PARTS = ("input_text", "output_text", "text")
_OUTPUTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}


@dataclass
class _Reader:
    session: Session
    response_start: int | None = None
    rolled_back: bool = False

    def item(self, item: dict[str, Any]) -> None:
        """One response item: a message, a tool call or a tool output."""
        kind = item.get("type")
        if kind == "message":
            self.message(item)
        elif kind in _CALLS:
            self.call(item)
        elif kind in _OUTPUTS:
            self.response_start = None
            self.session.messages.append({"role": "tool", "tool_call_id": item.get("call_id"),
                                          "content": _output(item.get("output"))})

    def message(self, item: dict[str, Any]) -> None:
        """A user or assistant message; a user text opening with the summary prefix is a
        compaction."""
        role, text = item.get("role"), _text(item.get("content"))
        if role == "user" and text.startswith(SUMMARY_PREFIX):
            self.session.add_compaction(text)
        elif role == "user" and text:
            self.response_start = None
            self.session.messages.append({"role": "user", "content": text})
        elif role == "assistant" and text:
            self.start_response()
            self.session.messages.append({"role": "assistant", "content": text})

    def call(self, item: dict[str, Any]) -> None:
        """A tool call, added to the assistant message it belongs to."""
        self.start_response()
        if item.get("type") == "local_shell_call":
            name, arguments = "shell", json.dumps(item.get("action") or {})
        elif item.get("type") == "custom_tool_call":
            name, arguments = item.get("name") or "tool", json.dumps({"input": item.get("input")})
        else:
            name, arguments = item.get("name") or "tool", str(item.get("arguments") or "{}")
        messages = self.session.messages
        if not messages or messages[-1].get("role") != "assistant":
            messages.append({"role": "assistant", "content": ""})
        messages[-1].setdefault("tool_calls", []).append({
            "id": item.get("call_id"), "type": "function",
            "function": {"name": str(name), "arguments": arguments}})

    def start_response(self) -> None:
        """Note where the response being read began (its request sent what came before)."""
        if self.response_start is None:
            self.response_start = len(self.session.messages)

    def compacted(self, payload: dict[str, Any]) -> None:
        """A boundary with its readable summary, if the rollout kept one."""
        summary = str(payload.get("message") or "")
        for item in payload.get("replacement_history") or []:
            if summary or not isinstance(item, dict) or item.get("role") != "user":
                continue
            text = _text(item.get("content"))
            summary = text if text.startswith(SUMMARY_PREFIX) else ""
        self.session.add_compaction(summary)
        self.response_start = None

    def event(self, payload: dict[str, Any]) -> None:
        """A token count (the request just answered) or a rollback (the prefix breaks)."""
        if payload.get("type") == "thread_rolled_back":
            self.rolled_back = True
        if payload.get("type") != "token_count":
            return
        usage = (payload.get("info") or {}).get("last_token_usage")
        if not isinstance(usage, dict) or not usage.get("input_tokens"):
            return  # no request: a count repeated after a compaction reports zero input
        self.session.add_request(_int(usage.get("input_tokens")),
                                 _int(usage.get("cached_input_tokens")),
                                 end=self.response_start, prefix_ok=not self.rolled_back)
        self.rolled_back, self.response_start = False, None


def read_codex(records: Iterable[tuple[int, dict[str, Any]]], source: str) -> Session:
    """The session of a Codex rollout (see the module docstring)."""
    reader = _Reader(Session(source, "codex"))
    for _, record in records:
        kind, payload = record.get("type"), record.get("payload")
        if kind not in _WRAPPED or not isinstance(payload, dict):
            reader.item(record)  # an older rollout's bare item (metadata lines have no type)
        elif kind == "session_meta" and isinstance(payload.get("cwd"), str):
            reader.session.cwd = reader.session.cwd or payload["cwd"]
        elif kind == "response_item":
            reader.item(payload)
        elif kind == "compacted":
            reader.compacted(payload)
        elif kind == "event_msg":
            reader.event(payload)
    return reader.session


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = [str(part.get("text") or "") for part in content or []
             if isinstance(part, dict) and part.get("type") in _TEXT_PARTS]
    return "\n".join(text for text in texts if text)


def _output(output: Any) -> str:
    """A tool output: older rollouts wrap it as JSON `{"output": ..., "metadata": ...}`."""
    if isinstance(output, str):
        try:
            decoded = json.loads(output)
        except ValueError:
            return output
        if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
            return decoded["output"]
        return output
    return _text(output) if isinstance(output, list) else json.dumps(output)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
