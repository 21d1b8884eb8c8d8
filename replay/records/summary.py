"""What a summarizer produced from a Phase A history, and what it cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCHEMA = 2  # 2: names its format and version
FORMAT = "replay.summary"


@dataclass(frozen=True)
class Summary:
    """What a summarizer produced, and what it cost.

    `messages` is set only by observation-masking, whose output is a message list to continue
    from rather than a text. `requests` are the chat requests it sent
    (`replay.models.types.ChatRequest`), `calls` the cache keys of the model calls that made it
    (empty until the caller records them, in a copy). `details` holds `truncated` when a reply
    was cut off by its output cap, what a fused summary reports (units, lengths, budgets; see
    `replay.compaction.fusion`), and `invalid` when the summary breaks its method's own rules
    (the study's H over its allowance after its attempts): such a summary scores zero.
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

    @property
    def invalid(self) -> str | None:
        """Why the summary's own method rejects it (it scores zero: a POST fails with nothing
        continued, a probe context fails), or None."""
        why = self.details.get("invalid")
        return str(why) if why else None


@dataclass(frozen=True)
class KeptSummary:
    """A summary as the store keeps it, by the key of what determines it: its instance, sample
    and summarizer, and the summary, or why the summarizer's server refused to write it
    (`refused`; then there is no summary). `requests` counts the requests that wrote it;
    `keys_recorded` is False for one kept before the keys of its calls were (its
    `Summary.calls` are then empty)."""

    instance_id: str
    seed_index: int
    summarizer: str
    summary: Summary | None
    refused: str = ""
    requests: int = 0
    keys_recorded: bool = True
