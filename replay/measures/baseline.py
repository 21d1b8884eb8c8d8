"""The mechanical baseline beside a summary: `anchor_index` cut to the summary's own size.

Unbounded, `anchor_index` lists every literal detail of the history, found by much the same
patterns as the reference: it keeps nearly everything by construction, at many times a
summary's length. Compared fairly it gets the same budget as the summary it stands beside, in
characters (`budget_index`): the history's anchors are ranked by how many places they were seen
in (most recurring first), then by the last message they were seen in (most recent first), and
entries are taken in that order while they fit; the entries kept are listed by kind, as the full
index lists them. The unbounded index is kept too, as `anchor_index_full`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replay.compaction.anchors import KINDS, Anchor, find_anchors
from replay.compaction.mechanical import anchor_index
from replay.measures.retention import Score
from replay.models.types import Message

BUDGETED = "anchor_index"
FULL = "anchor_index_full"


@dataclass
class MethodScore:
    """One method's text at a boundary: its size in characters and its two scores."""

    name: str
    chars: int
    recurring: Score | None
    future: Score | None

    def to_dict(self) -> dict[str, object]:
        """Size, shares, and shares per 1,000 characters of text."""
        return {"name": self.name, "chars": self.chars,
                "recurring": _share(self.recurring), "production": _share(self.future),
                "recurring_per_1k_chars": per_thousand(_share(self.recurring), self.chars),
                "production_per_1k_chars": per_thousand(_share(self.future), self.chars)}


def per_thousand(share: float | None, chars: int) -> float | None:
    """Retention per 1,000 characters of the text that kept it."""
    return None if share is None or chars == 0 else 1000 * share / chars


def _share(found: Score | None) -> float | None:
    return None if found is None else found.share


def _last_seen(anchor: Anchor) -> int:
    """The highest message number among an anchor's places (`#12 tool:bash`)."""
    numbers = [int(place[1:].split()[0]) for place in anchor.where
               if place.startswith("#") and place[1:].split()[0].isdigit()]
    return max(numbers, default=-1)


def budget_index(messages: Sequence[Message], budget: int) -> str:
    """The history's anchor index in at most `budget` characters (see the module docstring)."""
    grouped = find_anchors(messages)
    ranked = sorted((anchor for kind in KINDS for anchor in grouped[kind]),
                    key=lambda anchor: (-len(anchor.where), -_last_seen(anchor)))
    head = f"Index of literal details in the {len(messages)} earlier messages (most seen first)."
    used, chosen = len(head) + 1, set()
    headings: set[str] = set()
    for anchor in ranked:
        cost = len(anchor.value) + 3 + (0 if anchor.kind in headings else len(anchor.kind) + 5)
        if used + cost > budget:
            continue
        used += cost
        chosen.add((anchor.kind, anchor.value))
        headings.add(anchor.kind)
    lines = [head]
    for kind in KINDS:
        kept = [anchor.value for anchor in grouped[kind] if (kind, anchor.value) in chosen]
        if kept:
            lines += ["", f"## {kind}", *(f"- {value}" for value in kept)]
    return "\n".join(lines)[:budget]


def baseline_texts(messages: Sequence[Message], budget: int) -> dict[str, str]:
    """The budgeted and the unbounded index of `messages`."""
    return {BUDGETED: budget_index(messages, budget), FULL: anchor_index(messages)}
