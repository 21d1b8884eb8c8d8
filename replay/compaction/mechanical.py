"""Mechanical summarizers: pure text, no model.

- `anchor_index`: an index of the history's literal details and where each was seen (the
  study's baseline that kept 79.1% of recurring details).
- `observation_masking`: the history with old tool outputs replaced by placeholders.
- `tail`: the last N tokens of the transcript.

Tokens here are the pieces of `TOKEN_PIECE`: runs of word characters and single punctuation
characters, whitespace not counted. It is a deterministic, tokenizer-free count, near a BPE
count for prose and below it for long identifiers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from replay.compaction.anchors import KINDS, Anchor, find_anchors
from replay.compaction.transcript import message_text, serialize_history, tool_name, tool_names
from replay.models.types import Message

TOKEN_PIECE = re.compile(r"\w+|[^\w\s]")
TITLES = {
    "paths": "Files and paths",
    "test ids": "Test ids",
    "error messages": "Error messages",
    "error types": "Error types",
    "commands": "Commands run",
    "urls": "URLs",
    "identifiers": "Identifiers",
    "numbers": "Numbers (with context)",
}
MAX_PLACES = 8


def anchor_index(messages: Sequence[Message]) -> str:
    """An index of the history's literal details, grouped by kind, each with where it was seen.

    Places read `#3 tool:bash` (message 3, output of bash), `#2 assistant→bash` (a call's
    arguments in message 2) or `#0 user`. Deterministic: kinds in a fixed order, values in order
    of first sight, each value once.
    """
    grouped = find_anchors(messages)
    lines = [
        f"Index of literal details in the {len(messages)} earlier messages, "
        "with where each was seen (#message role:tool)."
    ]
    for kind in KINDS:
        anchors = grouped[kind]
        if anchors:
            lines += ["", f"## {TITLES[kind]} ({len(anchors)})"]
            lines += [_entry(anchor) for anchor in anchors]
    if len(lines) == 1:
        lines.append("(no literal details found)")
    return "\n".join(lines) + "\n"


def _entry(anchor: Anchor) -> str:
    places = ", ".join(anchor.where[:MAX_PLACES])
    if len(anchor.where) > MAX_PLACES:
        places += f", +{len(anchor.where) - MAX_PLACES} more"
    value = f"`{anchor.value}`" if anchor.kind == "commands" else anchor.value
    context = f" — {anchor.context}" if anchor.context and anchor.context != anchor.value else ""
    return f"- {value}{context} [{places}]"


def observation_masking(messages: Sequence[Message], keep_last: int) -> list[Message]:
    """The history with every tool output but the last `keep_last` replaced by a placeholder.

    Messages are copied (the input is left as it is); a masked tool message keeps its
    `tool_call_id` and `name`, so every call still has its answer.
    """
    if keep_last < 0:
        raise ValueError(f"keep_last must be >= 0, got {keep_last}")
    names = tool_names(messages)
    tool_positions = [i for i, message in enumerate(messages) if message.get("role") == "tool"]
    masked = set(tool_positions[: max(len(tool_positions) - keep_last, 0)])
    kept: list[Message] = []
    for index, message in enumerate(messages):
        copy = dict(message)
        if index in masked:
            size = len(message_text(message))
            copy["content"] = f"[output of {tool_name(message, names)} omitted ({size} chars)]"
        kept.append(copy)
    return kept


def tail(messages: Sequence[Message], tokens: int) -> str:
    """The last `tokens` tokens (pieces of `TOKEN_PIECE`) of `serialize_history(messages)`."""
    if tokens < 0:
        raise ValueError(f"tokens must be >= 0, got {tokens}")
    text = serialize_history(messages)
    if tokens == 0:
        return ""
    starts = [match.start() for match in TOKEN_PIECE.finditer(text)]
    return text if len(starts) <= tokens else text[starts[-tokens] :]
