"""A collected corpus's manifest: `corpus.toml` (one `[[session]]` table per file, and the
redaction's counts) and `PROVENANCE.tsv` (the same rows as a table), written by
`replay sessions collect` and read by `replay retention --corpus`.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from replay.core.errors import InputError

MANIFEST = "corpus.toml"
PROVENANCE = "PROVENANCE.tsv"


@dataclass
class CorpusEntry:
    """One session file of a corpus and where it came from."""

    file: str  # relative to the corpus folder
    repository: str
    commit: str  # the checkpoint branch's commit it was read at
    path: str  # the last shard's folder on the branch
    shards: int
    session_id: str
    agent: str
    licence: str
    boundaries: int | None  # compactions; None when no reader knows the format
    size: int  # bytes written
    complete: bool  # every shard's transcript was present
    redacted: int = 0
    redacted_scored: int = 0  # of which were values retention scores as details


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def write_manifest(folder: Path, entries: list[CorpusEntry], redacted: dict[str, int],
                   scored: dict[str, int]) -> None:
    """Write `corpus.toml` and `PROVENANCE.tsv` into the folder."""
    lines = ["# written by `replay sessions collect`; read by `replay retention --corpus`", "",
             "[redaction]"]
    lines += [f"{json.dumps(kind)} = {count}" for kind, count in sorted(redacted.items())]
    lines += ["", "[redaction_scored]"]
    lines += [f"{json.dumps(kind)} = {count}" for kind, count in sorted(scored.items())]
    for entry in entries:
        lines += ["", "[[session]]"]
        lines += [f"{key} = {_toml_value(value)}" for key, value in asdict(entry).items()
                  if value is not None]
    (folder / MANIFEST).write_text("\n".join(lines) + "\n", encoding="utf-8")
    names = [f.name for f in fields(CorpusEntry)]
    rows = ["\t".join(names)]
    rows += ["\t".join("-" if value is None else str(value).lower() if isinstance(value, bool)
                       else str(value) for value in asdict(entry).values()) for entry in entries]
    (folder / PROVENANCE).write_text("\n".join(rows) + "\n", encoding="utf-8")


def read_manifest(folder: Path) -> list[CorpusEntry]:
    """The entries of a corpus folder's `corpus.toml`; bad input when it is missing or broken."""
    path = folder / MANIFEST
    if not folder.is_dir():
        raise InputError(f"{folder}: no such corpus folder")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: cannot read the corpus manifest: {exc}") from None
    known = {f.name for f in fields(CorpusEntry)}
    entries = []
    for number, row in enumerate(data.get("session", []), start=1):
        try:
            values = {"boundaries": None, **{k: v for k, v in row.items() if k in known}}
            entries.append(CorpusEntry(**values))
        except TypeError as exc:
            raise InputError(f"{path}: session {number}: {exc}") from None
    return entries
