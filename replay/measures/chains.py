"""Scores of real sessions: every compaction's summary against what came before and after it.

For compaction k of a session (its position in the chain is k, from 1):

- recurring-detail retention: the reference is the details of what the compactor saw (the
  previous summary and the messages since the previous boundary, the last `max_chars`
  serialized characters of them) that recur in the messages after the boundary, up to the next;
- production-chain retention: the reference is the details of the first `FUTURE_PAYLOADS`
  messages after the boundary (no recurrence required);
- the disorder check (`replay.measures.disorder`): files finished before the boundary, with
  evidence, that the summary shows as pending work;
- with `baseline`, the same two references scored on `anchor_index` written from what the
  compactor saw, cut to the summary's size in characters (`replay.measures.baseline`), and on
  the unbounded index (`anchor_index_full`): the mechanical baseline beside the production
  summary, on the same boundary, each with its size.

Paths are matched in their forms (`PathForms`): relative to the session's working directory
when the file records one (whose components are no details: `project_name`); with `literal`,
only as written (the study's strict rule). Every score records its reference's source
(`session`: the session's own later messages) and size.

A compaction without readable summary text (Codex's remote compaction) is left out of the
means, as is one whose reference is empty; both are counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from replay.measures.baseline import BUDGETED, FULL, MethodScore, baseline_texts
from replay.measures.details import Reading, find_details, message_payload
from replay.measures.disorder import disorder
from replay.measures.matching import PathForms
from replay.measures.noise import imported_names, project_names
from replay.measures.retention import (
    FUTURE_PAYLOADS,
    Limits,
    Occurrences,
    PositionMean,
    Score,
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
    summary_chars: int = 0
    baseline: list[MethodScore] = field(default_factory=list)
    reference: dict[str, list[str]] = field(default_factory=dict)  # recurring, summary or not


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
    baseline_future: dict[str, list[PositionMean]] = field(default_factory=dict)
    baseline_recurring: dict[str, list[PositionMean]] = field(default_factory=dict)

    @property
    def scored(self) -> list[SessionScore]:
        """The sessions the completeness filter kept."""
        return [session for session in self.sessions if session.kept]


def score_session(session: Session, limits: Limits, baseline: bool = False,
                  literal: bool = False) -> SessionScore:
    """Completeness, and each compaction's scores (see the module docstring); with `baseline`,
    also the scores of `anchor_index` written from what the compactor saw."""
    found, pairs = completeness(session)
    result = SessionScore(session.source, session.format, found, pairs, kept(session))
    payloads = [message_payload(message) for message in session.messages]
    boundaries = session.compactions
    written: list[str] = []
    project = project_names([session.cwd])
    reading = Reading(project, imported_names("\n".join(payloads), project))  # shared by all texts
    for position, compaction in enumerate(boundaries, start=1):
        start = boundaries[position - 2].index if position > 1 else 0
        stop = boundaries[position].index if position < len(boundaries) else len(payloads)
        written = list(dict.fromkeys(
            [*written, *written_files(session.messages[start:compaction.index])]))
        scored = CompactionScore(position, compaction.trigger, None, None, len(written), [],
                                 len(compaction.summary))
        result.compactions.append(scored)
        seen = payloads[start:compaction.index]
        if position > 1:
            seen = [boundaries[position - 2].summary, *seen]
        history = find_details(_joined(seen, limits.max_chars, tail=True), reading)
        forms = PathForms.of([session.cwd], history.values["path"], literal)
        later = Occurrences(_joined(payloads[compaction.index:stop], limits.max_chars))
        recurring = scored.reference = recurring_reference(history, later, limits, forms=forms)
        if not compaction.summary:
            continue
        future = [text for text in payloads[compaction.index:stop] if text][:FUTURE_PAYLOADS]
        upcoming = future_reference(find_details(_joined(future, limits.max_chars), reading),
                                    limits, forms)
        scored.recurring = score(recurring, compaction.summary, forms)
        scored.future = score(upcoming, compaction.summary, forms)
        scored.disorder = disorder(session.messages[:compaction.index],
                                   session.messages[compaction.index:stop], compaction.summary,
                                   written)
        if baseline:
            texts = baseline_texts(_seen_messages(session, position), len(compaction.summary))
            scored.baseline = [MethodScore(name, len(text), score(recurring, text, forms),
                                           score(upcoming, text, forms))
                               for name, text in texts.items()]
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


def score_sessions(sessions: Sequence[Session], limits: Limits, baseline: bool = False,
                   literal: bool = False) -> ChainReport:
    """Score every session; the means and the disorder rate cover the kept ones only."""
    scores = [score_session(session, limits, baseline, literal) for session in sessions]
    kept_scores = [score for score in scores if score.kept]
    checked = [c for s in kept_scores for c in s.compactions if c.written and c.future]
    report = ChainReport(
        scores,
        position_means([_share(c.future) for c in s.compactions] for s in kept_scores),
        position_means([_share(c.recurring) for c in s.compactions] for s in kept_scores),
        sum(1 for c in checked if c.disorder), len(checked),
        sum(1 for s in kept_scores for c in s.compactions if c.future is None))
    for name in (BUDGETED, FULL) if baseline else ():
        report.baseline_recurring[name] = position_means(
            [_method(c, name, recurring=True) for c in s.compactions] for s in kept_scores)
        report.baseline_future[name] = position_means(
            [_method(c, name, recurring=False) for c in s.compactions] for s in kept_scores)
    return report


def _method(compaction: CompactionScore, name: str, recurring: bool) -> float | None:
    for method in compaction.baseline:
        if method.name == name:
            return _share(method.recurring if recurring else method.future)
    return None


def _share(found: Score | None) -> float | None:
    return None if found is None else found.share
