"""Summaries a model writes with a production prompt at artificial boundaries of a corpus's
sessions, scored like the production summaries (`replay retention --corpus --summarizer`).

One boundary per session: where the session's first real compaction fell (so the model
summarizes what the production compactor summarized, and both are scored on the same
references), else after the middle message. The model is handed the messages before the
boundary, the last `history_chars` serialized characters of them (a small model's context is
short); the references are those of `replay.measures.chains` for a first boundary. Sessions are
drawn in a seeded random order, `limit` of them; the model's calls are kept in the store's call
cache, so a run stopped half-way resumes without calling again.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from replay.compaction.sources import PromptText
from replay.compaction.summarize import SummarizerName, summarize
from replay.core.errors import InputError
from replay.corpus.scoring import Job
from replay.measures.chains import score_session
from replay.measures.details import message_payload
from replay.measures.retention import Limits
from replay.measures.session_files import READERS, detect_format, read_records
from replay.measures.sessions import Compaction, Session
from replay.models.types import Message, Model

SEED = 35


@dataclass
class ArtificialScore:
    """One session's artificial boundary: the model's summary scores, and the production
    summary's at the same boundary when a real compaction fell there."""

    file: str
    index: int
    real: bool
    summary_chars: int
    production: float | None
    recurring: float | None
    real_production: float | None = None
    real_recurring: float | None = None


def draw(todo: Sequence[Job], limit: int | None) -> list[Job]:
    """The jobs in a seeded random order, the first `limit` of them."""
    order = sorted(todo, key=lambda job: job.entry.file)
    random.Random(SEED).shuffle(order)
    return order[:limit] if limit else order


def tail_messages(messages: Sequence[Message], history_chars: int) -> list[Message]:
    """The last messages whose payloads fit in `history_chars` (at least the last one)."""
    kept: list[Message] = []
    used = 0
    for message in reversed(messages):
        used += len(message_payload(message))
        if kept and used > history_chars:
            break
        kept.append(message)
    kept.reverse()
    while kept and kept[0].get("role") == "tool":  # a tool result needs its call before it
        kept.pop(0)
    return kept


def _session(job: Job) -> Session | None:
    try:
        records = read_records(job.path)
        return READERS[detect_format(records, job.path)](records, str(job.path)) \
            if records else None
    except InputError:
        return None


def score_one(job: Job, name: SummarizerName, prompt: PromptText, model: Model, limits: Limits,
              history_chars: int) -> ArtificialScore | None:
    """The model's summary at the session's artificial boundary, scored (None: unreadable, or
    too short to cut)."""
    session = _session(job)
    if session is None or len(session.messages) < 4:
        return None
    real = next((c for c in session.compactions if c.summary), None)
    index = real.index if real else len(session.messages) // 2
    history = tail_messages(session.messages[:index], history_chars)
    if not history:
        return None
    text = summarize(history, name, prompt, model).text
    mine = Session(session.source, session.format, session.messages,
                   [Compaction(index, text)], cwd=session.cwd)
    scored = score_session(mine, limits).compactions[0]
    found = ArtificialScore(job.entry.file, index, real is not None, len(text),
                            _share(scored.future), _share(scored.recurring))
    if real is not None:
        production = score_session(Session(session.source, session.format, session.messages,
                                           [real], cwd=session.cwd), limits).compactions[0]
        found.real_production = _share(production.future)
        found.real_recurring = _share(production.recurring)
    return found


def score_all(jobs: Sequence[Job], name: SummarizerName, prompt: PromptText, model: Model,
              limits: Limits, history_chars: int,
              advance: Callable[[], None]) -> Iterator[ArtificialScore]:
    """Each drawn session's score, in order; `advance` after each."""
    for job in jobs:
        found = score_one(job, name, prompt, model, limits, history_chars)
        advance()
        if found is not None:
            yield found


def _share(found: object) -> float | None:
    return getattr(found, "share", None) if found is not None else None
