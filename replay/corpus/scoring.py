"""Scoring a collected corpus: every complete session's compactions, in parallel, resumable.

Each session is scored in a worker process (`score_file`) into a small JSON record: per
compaction its position, trigger, whether the user gave summary instructions (Claude Code's
`/compact` with arguments), the production-chain score and its reference size, the
recurring-detail score, and the recurring score of `anchor_index` cut to the summary's size.
Records are kept under `<corpus>/.scores/` named by the file, the limits and a digest of the
scoring code, so a run stopped half-way resumes where it was and a record of older code is not
reused; an unreadable file is a record with its reason.
A session the manifest marks incomplete is not scored: it is counted apart.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from replay.core.errors import InputError
from replay.corpus.manifest import CorpusEntry
from replay.measures.baseline import BUDGETED
from replay.measures.chains import CompactionScore, score_session
from replay.measures.retention import Limits
from replay.measures.session_files import READERS, detect_format, read_records
from replay.measures.sessions import Session

CACHE = ".scores"
_SCORING_MODULES = (
    "replay.corpus.scoring", "replay.measures.chains", "replay.measures.retention",
    "replay.measures.details", "replay.measures.matching", "replay.measures.noise",
    "replay.measures.secrets", "replay.measures.baseline", "replay.measures.sessions",
    "replay.measures.claude_code", "replay.measures.codex", "replay.measures.session_files",
    "replay.compaction.mechanical", "replay.compaction.anchors")
_ARGS = re.compile(r"<command-name>/compact</command-name>.*?<command-args>(.*?)</command-args>",
                   re.DOTALL)


@dataclass(frozen=True)
class Job:
    """One session file to score, and where its record goes."""

    entry: CorpusEntry
    path: Path
    record: Path


def _share(found: Any) -> float | None:
    return None if found is None else found.share


def instructed_boundaries(records: list[tuple[int, dict[str, Any]]]) -> list[bool]:
    """For each Claude Code compact boundary in order: whether the `/compact` command that
    made it carried instructions (arguments)."""
    found, pending = [], False
    for _, record in records:
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            found.append(pending)
            pending = False
            continue
        content = (record.get("message") or {}).get("content") if record.get("type") == "user" \
            else None
        text = content if isinstance(content, str) else json.dumps(content or "")
        match = _ARGS.search(text) if "/compact" in text else None
        if match:
            pending = bool(match.group(1).strip())
    return found


def score_file(path: Path, limits: Limits) -> dict[str, Any]:
    """The record of one session file (see the module docstring); `error` when unreadable."""
    try:
        records = read_records(path)
        if not records:
            raise InputError(f"{path}: empty")
        session = READERS[detect_format(records, path)](records, str(path))
    except InputError as exc:
        return {"error": str(exc)}
    scored = score_session(session, limits, baseline=True)
    instructed = instructed_boundaries(records) if session.format == "claude-code" else []
    future_sizes = _future_sizes(session, limits, scored.compactions)
    compactions = []
    for index, compaction in enumerate(scored.compactions):
        anchor = next((m for m in compaction.baseline if m.name == BUDGETED), None)
        compactions.append({
            "position": compaction.position, "trigger": compaction.trigger,
            "instructed": instructed[index] if index < len(instructed) else None,
            "summary_chars": compaction.summary_chars,
            "production": _share(compaction.future),
            "future_size": future_sizes[index],
            "recurring": _share(compaction.recurring),
            "recurring_size": compaction.recurring.size if compaction.recurring else 0,
            "anchor_recurring": _share(anchor.recurring) if anchor else None,
            "anchor_chars": anchor.chars if anchor else None,
            "summarised": bool(compaction.future is not None)})
    return {"format": session.format, "completeness": scored.completeness,
            "pairs": scored.pairs, "kept": scored.kept, "compactions": compactions}


def _future_sizes(session: Session, limits: Limits, scored: list[CompactionScore]) -> list[int]:
    """Each boundary's future-reference size; a boundary without summary text (a remote
    compaction) gets its own, from a copy of the session whose empty summaries are a space
    (only the size is taken from that copy: no score of it is kept)."""
    if all(c.future is not None for c in scored):
        return [c.future.size if c.future else 0 for c in scored]
    filled = replace(session, compactions=[replace(c, summary=c.summary or " ")
                                           for c in session.compactions])
    return [c.future.size if c.future else 0
            for c in score_session(filled, limits).compactions]


def jobs(folder: Path, entries: Sequence[CorpusEntry], limits: Limits) -> list[Job]:
    """The complete sessions' files with the paths of their records."""
    cache = folder / CACHE
    found = []
    for entry in entries:
        path = folder / entry.file
        if not entry.complete:
            continue
        if not path.is_file():
            raise InputError(f"{path}: named in corpus.toml but missing")
        key = hashlib.sha256(f"{entry.file}|{entry.size}|{limits.max_chars}|"
                             f"{limits.per_kind}|{','.join(limits.kinds)}|{code_digest()}"
                             .encode()).hexdigest()[:24]
        found.append(Job(entry, path, cache / f"{key}.json"))
    return found


@functools.cache
def code_digest() -> str:
    """A digest of the scoring code (the session readers, the extraction and the scores): a
    record kept by other code is not reused."""
    digest = hashlib.sha256()
    for name in _SCORING_MODULES:
        module = importlib.import_module(name)
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()[:16]


def _score_job(job: Job, limits: Limits) -> dict[str, Any]:
    record = score_file(job.path, limits)
    job.record.write_text(json.dumps(record), encoding="utf-8")
    return record


def score_corpus(todo: Sequence[Job], limits: Limits, workers: int,
                 advance: Callable[[], None]) -> Iterator[tuple[Job, dict[str, Any]]]:
    """Each job with its record: read from the cache when there, else scored by `workers`
    processes (largest files first); `advance` is called as each one is done."""
    fresh = []
    for job in todo:
        if job.record.is_file():
            advance()
            yield job, json.loads(job.record.read_text(encoding="utf-8"))
        else:
            fresh.append(job)
    if not fresh:
        return
    fresh[0].record.parent.mkdir(exist_ok=True)
    fresh.sort(key=lambda job: -job.entry.size)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_score_job, job, limits): job for job in fresh}
        for future in as_completed(futures):
            advance()
            yield futures[future], future.result()
