"""Retention: the share of a reference set of literal details that a summary keeps.

Two reference sets, both pure functions of stored text:

- recurring details (`recurring_reference`): the details of the history before a boundary that
  recur in the payloads after it. They are the details the work went on to need.
- future details (`future_reference`): the details of the first few payloads after a real
  boundary, recurring or not, for production compaction chains.

Matching is literal and case-sensitive: a value is kept when it occurs in the summary as written.
Secrets are never part of a reference (a compactor is right to redact them). A reference reads
at most `Limits.max_chars` serialized characters of each side and keeps at most
`Limits.per_kind` values of each kind, in order of first sight.

The disorder check flags a summary that describes a file already written before the boundary
next to pending-work phrases ("next", "TODO", "still need to", ...), under a heading that names
pending work or on the same line: finished work presented as work still to do.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replay.compaction.anchors import argument_strings, parse_arguments, shell_command
from replay.compaction.transcript import call_arguments, call_name, tool_calls
from replay.measures.details import KINDS, Details, counted_numbers
from replay.models.types import Message

MAX_CHARS = 400_000
PER_KIND = 40
FUTURE_PAYLOADS = 5
PENDING = re.compile(r"\b(?:next|todo|to-do|to do|still need(?:s)? to|remaining|remains|pending|"
                     r"not yet|yet to|left to|need(?:s)? to|will|should|must|outstanding)\b",
                     re.IGNORECASE)
_HEADING = re.compile(r"^\s*(?:#+\s*.*|(?:\d+[.)]|[-*])?\s*\**[A-Z][^:\n]{0,60}:\**\s*)$")
_WRITE_TOOLS = {"write", "edit", "multiedit", "write_file", "edit_file", "create_file",
                "str_replace_editor", "str_replace_based_edit_tool", "notebookedit", "apply_patch",
                "create", "replace", "insert"}
_PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "file")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (\S+)", re.MULTILINE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_GLUED_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:%|[A-Za-z]+)")
_MARKS = ("://", "::", "/")
_EDGES = ".,;:!?'\"`()[]{}<>"
_REDIRECT = re.compile(r"(?:>>?|\btee(?:\s+-a)?)\s*([\w./~-]+\.\w+)")


@dataclass(frozen=True)
class Limits:
    """How much a reference reads and keeps (the study's values by default)."""

    max_chars: int = MAX_CHARS
    per_kind: int = PER_KIND

    def __post_init__(self) -> None:
        if self.max_chars < 1 or self.per_kind < 1:
            raise ValueError("max_chars and per_kind must be at least 1")


@dataclass
class Score:
    """A reference set and the part of it a summary kept, by kind."""

    reference: dict[str, list[str]]
    kept: dict[str, list[str]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """How many values the reference holds."""
        return sum(len(values) for values in self.reference.values())

    @property
    def found(self) -> int:
        """How many of them the summary kept."""
        return sum(len(values) for values in self.kept.values())

    @property
    def share(self) -> float | None:
        """found / size, or None for an empty reference (left out of means)."""
        return self.found / self.size if self.size else None

    def to_dict(self) -> dict[str, Any]:
        """The score as JSON: share, counts, and the missed and kept values by kind."""
        return {"share": self.share, "found": self.found, "size": self.size,
                "kept": {kind: values for kind, values in self.kept.items() if values},
                "missed": {kind: [v for v in values if v not in self.kept.get(kind, [])]
                           for kind, values in self.reference.items()
                           if len(values) > len(self.kept.get(kind, []))}}


def score(reference: dict[str, list[str]], summary: str) -> Score:
    """Which values of `reference` occur in `summary`: literal and case-sensitive, looked up as
    in the payloads (`Occurrences`)."""
    text = Occurrences(summary)
    kept = {kind: [value for value in values if value in text]
            for kind, values in reference.items()}
    return Score(reference, kept)


def _is_secret(value: str, secrets: set[str]) -> bool:
    return any(value in secret or secret in value for secret in secrets)


class Occurrences:
    """Literal look-ups in a text, answered on less than the whole text.

    A value without whitespace can only lie inside one whitespace-separated token, so it is
    looked for among the distinct tokens (the same answer, on a shorter string; a value holding
    `://`, `::` or `/` only among the tokens that hold it too). A number with its unit is looked
    for among the text's own numbers with units, whole: `16 passed` is not found in `116
    passed`, nor `38ms` in `738ms`. Anything else is looked for in the text.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = dict.fromkeys(text.split())
        self.joined = "\n".join(self.tokens)
        self._counted: set[str] | None = None
        self._cores: set[str] | None = None
        self._marked: dict[str, str] = {}

    def __contains__(self, value: str) -> bool:
        if value in self.tokens:
            return True
        parts = value.split()
        if len(parts) == 1 and parts[0] == value:
            if _GLUED_NUMBER.fullmatch(value):
                if self._cores is None:
                    self._cores = {token.strip(_EDGES) for token in self.tokens}
                return value in self._cores
            marker = next((mark for mark in _MARKS if mark in value), "")
            return value in (self._with(marker) if marker else self.joined)
        if len(parts) == 2 and _NUMBER.fullmatch(parts[0]):
            if self._counted is None:
                self._counted = set(counted_numbers(self.text))
            return value in self._counted
        return value in self.text

    def _with(self, mark: str) -> str:
        if mark not in self._marked:
            self._marked[mark] = "\n".join(token for token in self.tokens if mark in token)
        return self._marked[mark]


def recurring_reference(history: Details, later: Occurrences, limits: Limits,
                        secrets: Iterable[str] = ()) -> dict[str, list[str]]:
    """The history's details that occur in `later`, at most `limits.per_kind` of each kind in
    order of first sight, secrets (of either side) left out."""
    hidden = history.secrets | set(secrets)
    reference: dict[str, list[str]] = {}
    for kind in KINDS:
        chosen = reference[kind] = []
        for value in history.values[kind]:
            if value in later and not (hidden and _is_secret(value, hidden)):
                chosen.append(value)
                if len(chosen) == limits.per_kind:
                    break
    return reference


def future_reference(future: Details, limits: Limits) -> dict[str, list[str]]:
    """The details of future payloads, at most `limits.per_kind` of each kind, no secrets."""
    return {kind: [value for value in future.values[kind]
                   if not (future.secrets and _is_secret(value, future.secrets))][:limits.per_kind]
            for kind in KINDS}


def written_files(messages: Sequence[Message]) -> list[str]:
    """Paths the messages' tool calls wrote: write and edit tools, patches, shell redirects."""
    paths: dict[str, None] = {}
    for message in messages:
        for call in tool_calls(message):
            arguments = parse_arguments(call_arguments(call))
            name = call_name(call).lower()
            if name in _WRITE_TOOLS and isinstance(arguments, dict):
                paths.update(dict.fromkeys(str(arguments[key]) for key in _PATH_KEYS
                                           if isinstance(arguments.get(key), str)))
            for text in argument_strings(arguments):
                paths.update(dict.fromkeys(_PATCH_FILE.findall(text)))
            command = shell_command(arguments)
            if command:
                paths.update(dict.fromkeys(path for path in _REDIRECT.findall(command)
                                           if not path.startswith("/dev/")))
    return list(paths)


def pending_lines(summary: str) -> list[str]:
    """The summary's lines that describe pending work: under a heading that names it, or
    holding a pending-work phrase themselves."""
    lines, under_pending = [], False
    for line in summary.splitlines():
        if _HEADING.match(line):
            under_pending = bool(PENDING.search(line))
            continue
        if under_pending or PENDING.search(line):
            lines.append(line)
    return lines


def disorder(written: Iterable[str], summary: str) -> list[str]:
    """Basenames of written files that the summary describes as pending work."""
    names = {posixpath.basename(path.rstrip("/")) for path in written} - {""}
    pending = pending_lines(summary)
    return sorted(name for name in names if any(
        re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line) for line in pending))


@dataclass
class PositionMean:
    """The mean share at one boundary position of production chains."""

    position: int
    mean: float | None
    n: int
    empty: int


def position_means(shares_by_session: Iterable[Sequence[float | None]]) -> list[PositionMean]:
    """Mean share by boundary position (1 = each session's first compaction, ...), with n; a
    None share (empty reference) is counted apart."""
    collected: dict[int, list[float]] = {}
    empty: dict[int, int] = {}
    for shares in shares_by_session:
        for position, share in enumerate(shares, start=1):
            collected.setdefault(position, [])
            if share is None:
                empty[position] = empty.get(position, 0) + 1
            else:
                collected[position].append(share)
    return [PositionMean(position, sum(values) / len(values) if values else None, len(values),
                         empty.get(position, 0)) for position, values in sorted(collected.items())]


def mean(shares: Sequence[float | None]) -> tuple[float | None, int, int]:
    """The mean of the shares that are not None, how many there were, and how many were None."""
    values = [share for share in shares if share is not None]
    return (sum(values) / len(values) if values else None), len(values), len(shares) - len(values)
