"""Scripts for the fake models: turns, the rules choosing a script, and turn rendering.

A script is a list of turns served in order to the requests its rule matches. A turn is a dict:

- a reply, in OpenAI form: `{"content": "text", "tool_calls": [...]}`; a tool call may leave out
  `id` and `type` and may give `arguments` as an object: `{"function": {"name": "bash",
  "arguments": {"command": "ls"}}}`. Optional `finish_reason` (OpenAI word) and `usage`
  (`input_tokens`, `output_tokens`, `cached_tokens`, `cache_write_tokens`; estimated from text
  lengths otherwise).
- a fault: `{"fault": "429", "retry_after": 1}` or any HTTP status (`"500"`, `"401"`, with an
  optional `"message"`, or a `"body"` sent byte for byte as a real server's);
  `{"fault": "slow", "seconds": 2}` (answers, with the turn's reply fields, only after the
  delay); `{"fault": "malformed"}` (a 200 whose body is not JSON); `{"fault": "drop"}` (the
  connection closes without a response); `{"fault": "hang"}` (the request is read and never
  answered, until the server stops).

A rule matches on the request's model name and/or a substring of the last user message's text,
and/or substrings that must all be `seen` somewhere in the request's messages (a reader that
answers from what its context shows); the first matching script serves. An exhausted script
repeats its last turn, or serves its `default` turn when one is given.

A script `by_seed` is a deterministic server instead: the same request gets the same turn, the
turn of its sample (the request's `seed`, turn 0 without one), and at temperature 0 always turn
0, since greedy decoding ignores the seed; past the end, its last turn.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from replay.core.errors import InputError
from replay.models.types import Message
from replay.records.reply import Usage

Turn = dict[str, Any]

NAMED_FAULTS = ("slow", "malformed", "drop", "hang")


def fault_of(turn: Turn) -> str | None:
    """The turn's fault (`"429"`, `"slow"`, ...), or None for a plain reply."""
    fault = turn.get("fault")
    return None if fault is None else str(fault)


def check_turn(turn: Any) -> None:
    """Raise `InputError` when `turn` is not a reply or a known fault."""
    if not isinstance(turn, dict):
        raise InputError(f"a script turn must be an object, got {turn!r}")
    fault = fault_of(turn)
    if fault is not None:
        if fault not in NAMED_FAULTS and not (fault.isdigit() and 400 <= int(fault) < 600):
            raise InputError(f"unknown fault {fault!r}: use an HTTP status or {NAMED_FAULTS}")
        if fault == "slow" and not isinstance(turn.get("seconds"), (int, float)):
            raise InputError("a slow fault needs `seconds`")
        return
    if "usage" in turn:
        try:
            Usage.model_validate(turn["usage"])
        except ValidationError as exc:
            raise InputError(f"a scripted usage is invalid: {exc.errors()[0]['msg']}") from None
    if "content" not in turn and not turn.get("tool_calls"):
        raise InputError(f"a reply turn needs `content` or `tool_calls`: {turn!r}")
    for call in turn.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            raise InputError(f"a scripted tool call needs function.name: {call!r}")


@dataclass
class Script:
    """Turns for the requests whose model is `model`, whose last user text contains `contains`
    and whose messages hold every text in `seen`."""

    turns: list[Turn]
    model: str | None = None
    contains: str | None = None
    default: Turn | None = None
    seen: Sequence[str] = ()
    by_seed: bool = False

    def __post_init__(self) -> None:
        if not self.turns and self.default is None:
            raise InputError("a script needs at least one turn or a default")
        for turn in [*self.turns, *([self.default] if self.default is not None else [])]:
            check_turn(turn)

    def matches(self, model: str, last_user_text: str, messages_text: str = "") -> bool:
        """Whether this script's rule accepts a request."""
        if self.model is not None and self.model != model:
            return False
        if any(text not in messages_text for text in self.seen):
            return False
        return self.contains is None or self.contains in last_user_text


@dataclass
class ScriptBook:
    """Scripts with their positions; hands out the next turn for a request. Thread-safe."""

    scripts: Sequence[Script]
    _positions: list[int] = field(init=False)
    _serial: int = field(init=False, default=0)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._positions = [0] * len(self.scripts)

    def next_turn(self, model: str, last_user_text: str, messages_text: str = "",
                  sample: int = 0) -> Turn | None:
        """The next turn of the first matching script (or the turn of `sample`, for a script
        `by_seed`), tool call ids filled; None if none match."""
        with self._lock:
            for index, script in enumerate(self.scripts):
                if script.matches(model, last_user_text, messages_text):
                    return self._take(index, script, sample)
        return None

    def _take(self, index: int, script: Script, sample: int) -> Turn:
        position = min(sample, len(script.turns) - 1) if script.by_seed else self._positions[index]
        self._positions[index] += 1
        if position < len(script.turns):
            turn = script.turns[position]
        else:
            turn = script.default if script.default is not None else script.turns[-1]
        rendered = dict(turn)
        if turn.get("tool_calls"):
            rendered["tool_calls"] = [self._call(call) for call in turn["tool_calls"]]
        return rendered

    def _call(self, call: dict[str, Any]) -> dict[str, Any]:
        self._serial += 1
        arguments = call["function"].get("arguments", {})
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        return {
            "id": call.get("id") or f"call_{self._serial}",
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": arguments},
        }


def reply_message(turn: Turn) -> Message:
    """The OpenAI-format assistant message a reply turn stands for."""
    message: Message = {"role": "assistant", "content": turn.get("content")}
    if turn.get("tool_calls"):
        message["tool_calls"] = turn["tool_calls"]
    return message


def finish_reason(turn: Turn) -> str:
    """The turn's OpenAI finish reason: given, else `tool_calls` or `stop`."""
    return turn.get("finish_reason") or ("tool_calls" if turn.get("tool_calls") else "stop")


def turn_usage(turn: Turn, request_chars: int) -> Usage:
    """The turn's usage, or an estimate of four characters per token."""
    if "usage" in turn:
        return Usage.model_validate(turn["usage"])
    reply_chars = len(turn.get("content") or "") + len(json.dumps(turn.get("tool_calls") or []))
    return Usage(input_tokens=max(1, request_chars // 4), output_tokens=max(1, reply_chars // 4))


def sample_of(body: dict[str, Any]) -> int:
    """The sample a deterministic server draws for a request body: its seed when it samples,
    0 when it decodes greedily (temperature 0)."""
    if body.get("temperature") == 0:
        return 0
    seed = body.get("seed")
    return seed if isinstance(seed, int) and seed >= 0 else 0


def last_user_text(messages: Any) -> str:
    """Text of the last user message that has text, in either wire format ('' if none)."""
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text_of(message.get("content"))
            if text:
                return text
    return ""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def messages_text(value: Any) -> str:
    """Every string in a request's messages, joined by newlines (either wire format)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(messages_text(item) for item in value.values())
    if isinstance(value, list):
        return "\n".join(messages_text(item) for item in value)
    return ""
