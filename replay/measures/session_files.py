"""Session files a user brings: read every line, tell the format, build the session.

A line that is not a JSON object is bad input naming the file and the line; every file is read
before anything is scored, so a broken file stops the command before it prints or writes.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from replay.core.errors import InputError
from replay.core.input_paths import regular_files
from replay.measures.claude_code import read_claude_code
from replay.measures.codex import read_codex
from replay.measures.sessions import Session, read_messages_format

Records = list[tuple[int, dict[str, Any]]]
READERS: dict[str, Callable[[Records, str], Session]] = {
    "claude-code": read_claude_code, "codex": read_codex, "messages": read_messages_format}
FORMATS = ("auto", *READERS)
_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_CLAUDE_TYPES = {"user", "assistant", "system", "summary", "file-history-snapshot",
                 "queue-operation", "last-prompt", "progress"}


def read_records(path: Path) -> Records:
    """The JSON objects of a JSONL file (gzip-compressed when it ends in `.gz`) with their line
    numbers; blank lines are skipped."""
    try:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not valid JSON ({exc.msg} at column "
                             f"{exc.colno})") from None
        if not isinstance(record, dict):
            raise InputError(f"{path}:{number}: not a JSON object")
        records.append((number, record))
    return records


def detect_format(records: Records, path: Path) -> str:
    """claude-code, codex or messages, from the first records that tell them apart."""
    for _, record in records[:50]:
        kind = record.get("type")
        if kind in _CODEX_TYPES or {"id", "instructions"} <= record.keys():
            return "codex"
        if "sessionId" in record or "parentUuid" in record or kind in _CLAUDE_TYPES:
            return "claude-code"
        if "role" in record or kind == "compaction":
            return "messages"
    raise InputError(f"{path}: not a Claude Code transcript, a Codex rollout or a JSONL of "
                     "messages (use --format to say which)")


def session_paths(paths: Iterable[Path]) -> list[Path]:
    """The files named, with the `*.jsonl` and `*.jsonl.gz` files under each folder named."""
    found = []
    for path in paths:
        if path.is_dir():
            found += regular_files([*path.rglob("*.jsonl"), *path.rglob("*.jsonl.gz")])
        elif path.is_file():
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    if not found:
        raise InputError("no session file found")
    return found


def load_sessions(paths: Sequence[Path], fmt: str = "auto") -> list[Session]:
    """Every session of the files and folders named, read in full before any is scored."""
    if fmt not in FORMATS:
        raise InputError(f"unknown session format {fmt!r}: use {', '.join(FORMATS)}")
    sessions = []
    for path in session_paths(paths):
        records = read_records(path)
        if not records:
            continue
        chosen = detect_format(records, path) if fmt == "auto" else fmt
        sessions.append(READERS[chosen](records, str(path)))
    return sessions
