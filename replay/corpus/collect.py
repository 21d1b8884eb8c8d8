"""`replay sessions collect`: one redacted file per session of repositories' checkpoint branches,
with a manifest (`corpus.toml`) and a provenance table (`PROVENANCE.tsv`).

A source is a git directory (a clone or a bare mirror) or a git URL (cloned bare, the checkpoint
branch only, into a temporary folder). Every source is opened, and its branch found, before
anything is written; the corpus is written into `<out>.partial` and moved to `<out>` at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from replay.core.errors import InputError
from replay.corpus.checkpoints import BRANCH, CheckpointSession, Repository
from replay.corpus.manifest import CorpusEntry, write_manifest
from replay.corpus.redaction import Redactor
from replay.measures.session_files import READERS, detect_format


@dataclass
class Collected:
    """What a collection wrote and what its redaction changed."""

    entries: list[CorpusEntry] = field(default_factory=list)
    redacted: Counter[str] = field(default_factory=Counter)
    scored: Counter[str] = field(default_factory=Counter)


def check_out(out: Path) -> None:
    """Bad input unless `out` is a new folder in an existing, writable one."""
    if out.exists():
        raise InputError(f"{out}: already exists (collect writes a new folder)")
    parent = out.resolve().parent
    if not parent.is_dir():
        raise InputError(f"{out}: its folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise InputError(f"{out}: its folder {parent} is not writable")


def _open(source: str, stack: ExitStack) -> Repository:
    path = Path(source)
    if path.exists():
        git_dir = path / ".git" if (path / ".git").exists() else path
        return Repository(git_dir, _name(source))
    if "://" not in source and not source.startswith("git@"):
        raise InputError(f"{source}: no such folder, and not a git URL")
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="replay-collect-")))
    done = subprocess.run(["git", "clone", "--quiet", "--bare", "--single-branch", "--no-tags",
                           "--branch", BRANCH, source, str(folder / "repo")],
                          capture_output=True, check=False)
    if done.returncode:
        raise InputError(f"{source}: git clone failed: "
                         f"{done.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
    return Repository(folder / "repo", _name(source))


def _name(source: str) -> str:
    """`owner/name` of a URL or of a mirror's folder (`.../owner+name/repo`), else the folder's
    name."""
    parts = [p for p in source.rstrip("/").removesuffix(".git").replace(":", "/").split("/")
             if p and p not in {"repo", ".git"}]
    last = parts[-1] if parts else source
    if "+" in last:
        return last.replace("+", "/", 1)
    return "/".join(parts[-2:]) if "://" in source or source.startswith("git@") else last


def collect(sources: Sequence[str], out: Path,
            progress: Callable[[str], None] = lambda line: None) -> Collected:
    """Collect every session of the sources' checkpoint branches into `out` (see the module
    docstring)."""
    check_out(out)
    partial = out.with_name(out.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    result = Collected()
    with ExitStack() as stack:
        repositories = [_open(source, stack) for source in sources]
        partial.mkdir()
        try:
            for repository in repositories:
                _collect_one(repository, partial, result, progress)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)  # nothing half-written stays
            raise
    write_manifest(partial, result.entries, dict(result.redacted), dict(result.scored))
    partial.rename(out)
    return result


def _collect_one(repository: Repository, folder: Path, result: Collected,
                 progress: Callable[[str], None]) -> None:
    licence = repository.licence()
    sessions = repository.sessions()
    progress(f"{repository.name}: {len(sessions)} session(s) at {repository.commit[:12]}")
    for session in sessions:
        repository.join(session)
        result.entries.append(_write(repository, licence, session, folder, result))


def _write(repository: Repository, licence: str, session: CheckpointSession, folder: Path,
           result: Collected) -> CorpusEntry:
    redactor = Redactor()
    records = list(_records(session.lines, redactor))
    relative = Path("sessions") / repository.name.replace("/", "+") / f"{_safe(session)}.jsonl"
    target = folder / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for record in records)
    target.write_text(text, encoding="utf-8")
    result.redacted.update(redactor.counts)
    result.scored.update(redactor.scored)
    return CorpusEntry(
        file=relative.as_posix(), repository=repository.name, commit=repository.commit,
        path=session.shards[-1].path, shards=len(session.shards), session_id=session.session_id,
        agent=session.shards[-1].agent or "unknown", licence=licence,
        boundaries=_boundaries(records, str(relative)), size=len(text.encode()),
        complete=session.complete and _whole(session, records),
        redacted=sum(redactor.counts.values()),
        redacted_scored=sum(redactor.scored.values()))


def _records(lines: list[str], redactor: Redactor) -> Iterator[dict]:
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn line of a shard cut mid-write; the joined file keeps whole lines
        if isinstance(record, dict):
            yield redactor.value(record)


def _whole(session: CheckpointSession, records: list[dict]) -> bool:
    """Whether the joined lines were read as JSON lines: at most one torn line a shard. A
    transcript in another form (a pretty-printed JSON export) is not whole, never scored."""
    return len(session.lines) - len(records) <= len(session.shards)


def _boundaries(records: list[dict], source: str) -> int | None:
    """The session's compactions, or None when no reader knows its format."""
    numbered = list(enumerate(records, start=1))
    try:
        return len(READERS[detect_format(numbered, Path(source))](numbered, source).compactions)
    except (InputError, KeyError, TypeError, AttributeError, ValueError):
        return None


def _safe(session: CheckpointSession) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in session.session_id)[:120]
