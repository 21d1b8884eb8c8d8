"""The recurring-detail retention of one POST summary, as the store keeps it."""

from __future__ import annotations

from dataclasses import dataclass, field

SCHEMA = 2  # 2: names its format and version
FORMAT = "replay.retention"


@dataclass(frozen=True)
class KeptScore:
    """One summary's score: its cell (instance, summarizer, sample), the share of the reference
    it kept (None: an empty reference), how much it kept of how much, and the reference's source
    (`trajectory`, `suite` or `pre`)."""

    instance_id: str
    summarizer: str
    seed_index: int
    share: float | None
    found: int
    size: int
    source: str


@dataclass(frozen=True)
class ScoreDetail:
    """What a score kept and missed: the values by kind (a kept path with the form it matched
    in), the share under the strict rule (paths only as written), the limits it was scored
    under and the size of the summary's text."""

    score: KeptScore
    kept: dict[str, list[str]] = field(default_factory=dict)
    missed: dict[str, list[str]] = field(default_factory=dict)
    path_forms: dict[str, str] = field(default_factory=dict)
    literal_share: float | None = None
    limits: dict[str, object] = field(default_factory=dict)  # `replay.measures` Limits
    summary_chars: int = 0
