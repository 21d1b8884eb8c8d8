"""Scores of real sessions: every compaction's summary against what came before and after it.

For compaction k of a session (its position in the chain is k, from 1):

- recurring-detail retention: the reference is the details of what the compactor saw (the
  previous summary and the messages since the previous boundary, the last `max_chars`
  serialized characters of them) that recur in the messages after the boundary, up to the next;
- production-chain retention: the reference is the details of the first `FUTURE_PAYLOADS`
  messages after the boundary (no recurrence required);
- the disorder check: files written anywhere before the boundary that the summary describes as
  pending work;
- with `baseline`, the same two references scored on `anchor_index` written from what the
  compactor saw: the mechanical baseline beside the production summary, on the same boundary.

A compaction without readable summary text (Codex's remote compaction) is left out of the
means, as is one whose reference is empty; both are counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from replay.compaction.mechanical import anchor_index
from replay.measures.details import find_details, message_payload
from replay.measures.retention import (
    FUTURE_PAYLOADS,
    Limits,
    Occurrences,
    PositionMean,
    Score,
    disorder,
    future_reference,
    position_means,
    recurring_reference,
    score,
    written_files,
)
from replay.measures.sessions import Session, completeness, kept
from replay.models.types import Message


@dataclass
class CompactionScore:
    """One compaction of a session and its scores (None without summary text)."""

    position: int
    trigger: str
    recurring: Score | None
    future: Score | None
    written: int
    disorder: list[str]
    baseline: tuple[Score, Score] | None = None


@dataclass
class SessionScore:
    """A session's completeness and its compactions' scores."""

    source: str
    format: str
    completeness: float | None
    pairs: int
    kept: bool
    compactions: list[CompactionScore] = field(default_factory=list)


@dataclass
class ChainReport:
    """Scores of the sessions a user brought, by boundary position."""

    sessions: list[SessionScore]
    future: list[PositionMean]
    recurring: list[PositionMean]
    disorder_flagged: int
    disorder_checked: int
    unreadable: int = 0
    baseline_future: list[PositionMean] = field(default_factory=list)
    baseline_recurring: list[PositionMean] = field(default_factory=list)

    @property
    def scored(self) -> list[SessionScore]:
        """The sessions the completeness filter kept."""
        return [session for session in self.sessions if session.kept]


def score_session(session: Session, limits: Limits, baseline: bool = False) -> SessionScore:
    """Completeness, and each compaction's scores (see the module docstring); with `baseline`,
    also the scores of `anchor_index` written from what the compactor saw."""
    found, pairs = completeness(session)
    result = SessionScore(session.source, session.format, found, pairs, kept(session))
    payloads = [message_payload(message) for message in session.messages]
    boundaries = session.compactions
    written: list[str] = []
    for position, compaction in enumerate(boundaries, start=1):
        start = boundaries[position - 2].index if position > 1 else 0
        stop = boundaries[position].index if position < len(boundaries) else len(payloads)
        written = list(dict.fromkeys(
            [*written, *written_files(session.messages[start:compaction.index])]))
        scored = CompactionScore(position, compaction.trigger, None, None, len(written), [])
        result.compactions.append(scored)
        if not compaction.summary:
            continue
        seen = payloads[start:compaction.index]
        if position > 1:
            seen = [boundaries[position - 2].summary, *seen]
        later = _joined(payloads[compaction.index:stop], limits.max_chars)
        history = find_details(_joined(seen, limits.max_chars, tail=True))
        recurring = recurring_reference(history, Occurrences(later), limits)
        future = [text for text in payloads[compaction.index:stop] if text][:FUTURE_PAYLOADS]
        upcoming = future_reference(find_details(_joined(future, limits.max_chars)), limits)
        scored.recurring = score(recurring, compaction.summary)
        scored.future = score(upcoming, compaction.summary)
        scored.disorder = disorder(written, compaction.summary)
        if baseline:
            index = anchor_index(_seen_messages(session, position))
            scored.baseline = (score(recurring, index), score(upcoming, index))
    return result


def _seen_messages(session: Session, position: int) -> list[Message]:
    """What the compactor at `position` saw: the previous summary, then the messages since."""
    boundaries = session.compactions
    start = boundaries[position - 2].index if position > 1 else 0
    earlier = ([{"role": "user", "content": boundaries[position - 2].summary}]
               if position > 1 else [])
    return [*earlier, *session.messages[start:boundaries[position - 1].index]]


def _joined(texts: Sequence[str], max_chars: int, tail: bool = False) -> str:
    text = "\n\n".join(texts)
    if len(text) <= max_chars:
        return text
    return text[-max_chars:] if tail else text[:max_chars]


def score_sessions(sessions: Sequence[Session], limits: Limits,
                   baseline: bool = False) -> ChainReport:
    """Score every session; the means and the disorder rate cover the kept ones only."""
    scores = [score_session(session, limits, baseline) for session in sessions]
    kept_scores = [score for score in scores if score.kept]
    checked = [c for s in kept_scores for c in s.compactions if c.written and c.future]
    report = ChainReport(
        scores,
        position_means([_share(c.future) for c in s.compactions] for s in kept_scores),
        position_means([_share(c.recurring) for c in s.compactions] for s in kept_scores),
        sum(1 for c in checked if c.disorder), len(checked),
        sum(1 for s in kept_scores for c in s.compactions if c.future is None))
    if baseline:
        report.baseline_recurring = position_means(
            [c.baseline[0].share if c.baseline else None for c in s.compactions]
            for s in kept_scores)
        report.baseline_future = position_means(
            [c.baseline[1].share if c.baseline else None for c in s.compactions]
            for s in kept_scores)
    return report


def _share(found: Score | None) -> float | None:
    return None if found is None else found.share
