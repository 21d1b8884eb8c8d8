"""What a summarizer produced from a Phase A history, and what it cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCHEMA = 1


@dataclass(frozen=True)
class Summary:
    """What a summarizer produced, and what it cost.

    `messages` is set only by observation-masking, whose output is a message list to continue
    from rather than a text. `requests` are the chat requests it sent
    (`replay.models.types.ChatRequest`), `calls` the cache keys of the model calls that made it
    (empty until the caller records them, in a copy). `details` holds `truncated` when a reply
    was cut off by its output cap, and what a fused summary reports (units, lengths, budgets;
    see `replay.compaction.fusion`).
    """

    summarizer: str
    text: str
    messages: list[dict[str, Any]] | None = None
    requests: list[Any] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    calls: tuple[str, ...] = ()
