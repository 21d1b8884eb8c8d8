"""Real sessions: the messages of a production agent with its compactions and its requests.

A session is read from a file a user brings (`session_files`): a Claude Code transcript, a Codex
CLI rollout, or a plain JSONL of messages with boundary markers (`read_messages_format`). Every
format becomes the same `Session`: OpenAI-format messages, the compactions (where the boundary
falls in the messages and the summary the agent wrote there), and the model requests where the
file records them (the context each one sent, its input and cached tokens, and whether its
messages extend the previous request's).

The completeness filter keeps sessions whose recorded requests form an unbroken chain: a pair of
consecutive requests that crosses a compaction, or whose input tokens drop by more than half, is
left out; of the other pairs, the share whose messages extend the previous request's and, where
cached tokens are recorded, whose cached prefix did not shrink (a partial cache hit shorter than
the previous one means the prefix changed; no hit at all says nothing) is the completeness,
rounded to three decimals. Sessions under `MIN_COMPLETENESS` are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from replay.core.errors import InputError
from replay.models.types import Message

MIN_COMPLETENESS = 0.8
LARGE_DROP = 0.5  # a request whose input is under half the previous one's: context was cut
CACHE_TOLERANCE = 0.02


@dataclass
class Compaction:
    """A boundary: `messages[:index]` came before it; `summary` is what the agent kept."""

    index: int
    summary: str
    trigger: str = ""


@dataclass
class Request:
    """One model request: it sent `messages[:end]` (from the last boundary on)."""

    end: int
    input_tokens: int | None = None
    cached_tokens: int | None = None
    prefix_ok: bool = True


@dataclass
class Session:
    """A production session in one format-independent shape."""

    source: str
    format: str
    messages: list[Message] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    cwd: str = ""  # the working directory the file records (paths are also matched relative to it)

    def add_compaction(self, summary: str, trigger: str = "") -> None:
        """A boundary after the messages so far (two markers of one compaction count once)."""
        last = self.compactions[-1] if self.compactions else None
        if last is not None and last.index == len(self.messages):
            last.summary = last.summary or summary
            last.trigger = last.trigger or trigger
            return
        self.compactions.append(Compaction(len(self.messages), summary, trigger))

    def add_request(self, input_tokens: int | None, cached_tokens: int | None,
                    end: int | None = None, prefix_ok: bool = True) -> None:
        """A request that sent the messages so far (or `messages[:end]`)."""
        self.requests.append(Request(len(self.messages) if end is None else end, input_tokens,
                                     cached_tokens, prefix_ok))


def completeness(session: Session) -> tuple[float | None, int]:
    """The completeness of the session's request chain and how many pairs it was taken over;
    None when no pair could be judged (a file that records no requests)."""
    boundaries = [compaction.index for compaction in session.compactions]
    judged = complete = 0
    for before, after in zip(session.requests, session.requests[1:], strict=False):
        if any(before.end < index <= after.end for index in boundaries):
            continue
        if before.input_tokens and after.input_tokens is not None and (
                after.input_tokens < before.input_tokens * LARGE_DROP):
            continue
        judged += 1
        complete += after.prefix_ok and _cache_continues(before, after)
    return (round(complete / judged, 3) if judged else None), judged


def _cache_continues(before: Request, after: Request) -> bool:
    if not before.cached_tokens or not after.cached_tokens:
        return True
    return after.cached_tokens >= before.cached_tokens * (1 - CACHE_TOLERANCE)


def kept(session: Session) -> bool:
    """Whether the completeness filter keeps the session."""
    found, _ = completeness(session)
    return found is None or found >= MIN_COMPLETENESS


def read_messages_format(records: Iterable[tuple[int, dict[str, Any]]], source: str) -> Session:
    """A plain JSONL of messages: one OpenAI-format message per line, a boundary as
    `{"type": "compaction", "summary": "..."}`; an assistant line may carry the usage of the
    request that produced it, `"usage": {"input_tokens": N, "cached_tokens": M}`."""
    session = Session(source, "messages")
    for line, record in records:
        if record.get("type") == "compaction":
            session.add_compaction(str(record.get("summary") or ""), str(record.get("trigger", "")))
            continue
        if not isinstance(record.get("role"), str):
            raise InputError(f"{source}:{line}: a line needs a `role` or "
                             '`"type": "compaction"`')
        message = {key: value for key, value in record.items() if key != "usage"}
        usage = record.get("usage")
        if record["role"] == "assistant" and isinstance(usage, dict):
            session.add_request(_int(usage.get("input_tokens")), _int(usage.get("cached_tokens")))
        session.messages.append(message)
    return session


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
