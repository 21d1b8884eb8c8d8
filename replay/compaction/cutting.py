"""Cut a prompt's text out of a downloaded package by its rules (see `sources.PromptPart`).

Package files are handled as bytes, so one rule works on a bundled `.js` file and on a compiled
binary (Bun or Rust) that embeds the same text.
"""

from __future__ import annotations

import mmap
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from fnmatch import fnmatchcase
from pathlib import Path
from typing import IO

from replay.compaction.jsliterals import (
    MAX_ESCAPE_LEN,
    JSLiteralError,
    literal_around,
    search_key,
)
from replay.compaction.sources import (
    ByteRangeCut,
    Cut,
    JsLiteralCut,
    PromptPart,
    PromptSource,
    WholeFileCut,
)
from replay.core.errors import InputError

# How far past its search key a literal may run: far longer than any prompt.
_WINDOW = 1 << 20
_CHUNK = 1 << 20

# A package file's contents: bytes, or a memory map of them (find and slices work the same).
Data = bytes | mmap.mmap


class CutError(InputError):
    """A package file does not hold the text a cut rule describes."""


def cut_js_literal(data: Data, rule: JsLiteralCut) -> str:
    """The first literal chain in `data` (UTF-8 source text, or a binary embedding it) by `rule`."""
    key, key_offset = search_key(rule.starts)
    needle = key.encode("utf-8")
    reach = MAX_ESCAPE_LEN * key_offset + 1  # bytes the anchor before the key may take
    at = data.find(needle)
    while at >= 0:
        head = data[max(at - reach, 0) : at].decode("utf-8", "surrogateescape")
        tail = data[at : at + _WINDOW].decode("utf-8", "surrogateescape")
        text = literal_around(
            head + tail, len(head), key_offset, rule.starts, rule.contains, rule.substitutions
        )
        if text is not None:
            return text
        at = data.find(needle, at + 1)
    wanted = f" containing {rule.contains!r}" if rule.contains else ""
    raise CutError(f"no literal starting with {rule.starts[:60]!r}{wanted}")


def cut_byte_range(data: Data, rule: ByteRangeCut) -> str:
    """The bytes from the first `rule.starts` through the first `rule.through` after it."""
    start = data.find(rule.starts.encode("utf-8"))
    if start < 0:
        raise CutError(f"no bytes {rule.starts[:60]!r}")
    through = rule.through.encode("utf-8")
    end = data.find(through, start + len(rule.starts.encode("utf-8")))
    if end < 0:
        raise CutError(f"no bytes {rule.through[:60]!r} after {rule.starts[:60]!r}")
    return _utf8(data[start : end + len(through)])


def cut_text(data: Data, rule: Cut) -> str:
    """Apply one cut rule to a file's bytes."""
    try:
        if isinstance(rule, JsLiteralCut):
            return cut_js_literal(data, rule)
        if isinstance(rule, ByteRangeCut):
            return cut_byte_range(data, rule)
    except JSLiteralError as exc:
        raise CutError(str(exc)) from None
    assert isinstance(rule, WholeFileCut)
    return _utf8(data[:])  # a memory map slices to bytes


def cut_part(data: Data, part: PromptPart) -> str:
    """A part's text from its file's bytes: the cuts joined, trimmed if the part says so."""
    text = "".join(cut_text(data, rule) for rule in part.cuts)
    return text.strip() if part.trim else text


def member_matches(name: str, pattern: str) -> bool:
    """Whether archive path `name` matches `pattern`, segment by segment (`*` stays in one)."""
    names, patterns = name.split("/"), pattern.split("/")
    return len(names) == len(patterns) and all(map(fnmatchcase, names, patterns))


def cut_package(archive: Path, source: PromptSource) -> dict[str, str]:
    """Every part's text, by role, from a downloaded package (npm `.tgz` or wheel)."""
    pending = list(source.parts)
    texts: dict[str, str] = {}
    failures: dict[str, str] = {}
    with closing(iter_members(archive)) as members:
        for name, handle in members:
            wanted = [part for part in pending if member_matches(name, part.file)]
            if not wanted:
                continue
            with _mapped(handle) as data:
                for part in wanted:
                    try:
                        texts[part.role] = cut_part(data, part)
                    except CutError as exc:
                        failures[part.role] = f"{name}: {exc}"
                    else:
                        pending.remove(part)
            if not pending:
                return texts
    part = pending[0]
    reason = failures.get(part.role, f"no file {part.file}")
    raise CutError(f"{source.name} ({part.role}) not found in {source.spec}: {reason}")


@contextmanager
def _mapped(handle: IO[bytes]) -> Iterator[Data]:
    """A file's contents, memory-mapped from a spooled copy (binaries run to hundreds of MB)."""
    with tempfile.TemporaryFile() as spool:
        shutil.copyfileobj(handle, spool, _CHUNK)
        spool.flush()
        if spool.tell() == 0:
            yield b""
            return
        with mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield mapped


def iter_members(archive: Path) -> Iterator[tuple[str, IO[bytes]]]:
    """The regular files of a zip or gzipped tar archive, in archive order, with their contents."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as wheel:
            for info in wheel.infolist():
                if not info.is_dir():
                    with wheel.open(info) as handle:
                        yield info.filename, handle
        return
    try:
        with tarfile.open(archive, "r|gz") as tar:
            for member in tar:
                handle = tar.extractfile(member) if member.isfile() else None
                if handle is not None:
                    yield member.name, handle
    except tarfile.TarError as exc:
        raise CutError(f"{archive.name} is not a readable package archive: {exc}") from None


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CutError(f"the cut text is not UTF-8: {exc}") from None
