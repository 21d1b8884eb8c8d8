"""Retention: the share of a reference set of literal details that a summary keeps.

Two reference sets, both pure functions of stored text:

- recurring details (`recurring_reference`): the details of the history before a boundary that
  recur in the payloads after it. They are the details the work went on to need.
- future details (`future_reference`): the details of the first few payloads after a real
  boundary, recurring or not, for production compaction chains.

Matching is case-sensitive and by whole token (`replay.measures.matching`): a value is kept when
it occurs in the summary as a token of its own; a path also in another of its forms (relative
to the working directory or the repository root, absolute, a unique suffix), the form recorded.
Secrets are never part of a reference (a compactor is right to redact them). A reference reads
at most `Limits.max_chars` serialized characters of each side and keeps at most
`Limits.per_kind` values of each kind, in order of first sight.

The disorder check is in `replay.measures.disorder`; `written_files` (what tool calls wrote) is
here, shared by it and the scores.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replay.compaction.anchors import argument_strings, parse_arguments, shell_command
from replay.compaction.transcript import call_arguments, call_name, tool_calls
from replay.measures.details import KINDS, Details
from replay.measures.matching import Occurrences, PathForms
from replay.models.types import Message

MAX_CHARS = 400_000
# `number` is found but not scored: on the validation set 5 of 20 sampled numbers with units were
# details; the rest measured one output (diffstat and search counts, bundle sizes, timers).
UNSCORED = ("number",)
PER_KIND = 40
SCORED_KINDS = tuple(kind for kind in KINDS if kind not in UNSCORED)
FUTURE_PAYLOADS = 5
_WRITE_TOOLS = {"write", "edit", "multiedit", "write_file", "edit_file", "create_file",
                "str_replace_editor", "str_replace_based_edit_tool", "notebookedit", "apply_patch",
                "create", "replace", "insert"}
_PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "file")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (\S+)", re.MULTILINE)
_REDIRECT = re.compile(r"(?:>>?|\btee(?:\s+-a)?)\s*([\w./~-]+\.\w+)")


@dataclass(frozen=True)
class Limits:
    """How much a reference reads and keeps (the study's values by default)."""

    max_chars: int = MAX_CHARS
    per_kind: int = PER_KIND
    kinds: tuple[str, ...] = SCORED_KINDS

    def __post_init__(self) -> None:
        if self.max_chars < 1 or self.per_kind < 1:
            raise ValueError("max_chars and per_kind must be at least 1")


@dataclass
class Score:
    """A reference set and the part of it a summary kept, by kind."""

    reference: dict[str, list[str]]
    kept: dict[str, list[str]] = field(default_factory=dict)
    forms: dict[str, str] = field(default_factory=dict)  # kept path: the form that matched it

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

    @property
    def literal_share(self) -> float | None:
        """The share under the study's strict rule: a path kept only as the reference wrote it."""
        if not self.size:
            return None
        return (self.found - sum(form != "literal" for form in self.forms.values())) / self.size

    def to_dict(self) -> dict[str, Any]:
        """The score as JSON: share (and the strict rule's), counts, the kept values with the
        form each kept path matched in, and the missed values, by kind."""
        return {"share": self.share, "literal_share": self.literal_share, "found": self.found,
                "size": self.size, "path_forms": self.forms, "kept": self.kept_values(),
                "missed": self.missed()}

    def kept_values(self) -> dict[str, list[str]]:
        """The values the summary kept, by kind (kinds it kept none of left out)."""
        return {kind: values for kind, values in self.kept.items() if values}

    def missed(self) -> dict[str, list[str]]:
        """The reference's values the summary did not keep, by kind (kinds it kept whole are
        left out)."""
        return {kind: [v for v in values if v not in self.kept.get(kind, [])]
                for kind, values in self.reference.items()
                if len(values) > len(self.kept.get(kind, []))}


def score(reference: dict[str, list[str]], summary: str,
          forms: PathForms | None = None) -> Score:
    """Which values of `reference` occur in `summary`, each as a whole token of its kind; a path
    in any of its forms (`PathForms`; literally only without `forms`), the form recorded."""
    text = Occurrences(summary)
    forms = forms or PathForms(literal=True)
    found = Score(reference)
    for kind, values in reference.items():
        if kind != "path":
            found.kept[kind] = [value for value in values if text.has(kind, value)]
            continue
        found.kept[kind] = []
        for value in values:
            form = forms.kept(value, text)
            if form:
                found.kept[kind].append(value)
                found.forms[value] = form
    return found


def _is_secret(value: str, secrets: set[str]) -> bool:
    return any(value in secret or secret in value for secret in secrets)


def recurring_reference(history: Details, later: Occurrences, limits: Limits,
                        secrets: Iterable[str] = (),
                        forms: PathForms | None = None) -> dict[str, list[str]]:
    """The history's details that occur in `later` as whole tokens (a path in any of its
    `forms`, the forms of one path being one detail), at most `limits.per_kind` of each kind in
    order of first sight, secrets (of either side) left out."""
    hidden = history.secrets | set(secrets)
    forms = forms or PathForms(literal=True)
    reference: dict[str, list[str]] = {}
    for kind in limits.kinds:
        chosen = reference[kind] = []
        spellings: set[str] = set()
        for value in history.values[kind]:
            if hidden and _is_secret(value, hidden):
                continue
            if kind == "path":
                spelling = forms.canonical(value)
                if spelling in spellings or not forms.kept(value, later):
                    continue
                spellings.add(spelling)
            elif not later.has(kind, value):
                continue
            chosen.append(value)
            if len(chosen) == limits.per_kind:
                break
    return reference


def future_reference(future: Details, limits: Limits,
                     forms: PathForms | None = None) -> dict[str, list[str]]:
    """The details of future payloads, at most `limits.per_kind` of each kind, no secrets; the
    forms of one path count once (the first spelling seen stands for them)."""
    forms = forms or PathForms(literal=True)
    reference = {}
    for kind in limits.kinds:
        values = [value for value in future.values[kind]
                  if not (future.secrets and _is_secret(value, future.secrets))]
        if kind == "path":
            first: dict[str, str] = {}
            for value in values:
                first.setdefault(forms.canonical(value), value)
            values = list(first.values())
        reference[kind] = values[:limits.per_kind]
    return reference


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
                if "*** " in text:  # a patch's header: tried only where one can be
                    paths.update(dict.fromkeys(_PATCH_FILE.findall(text)))
            command = shell_command(arguments)
            if command:
                paths.update(dict.fromkeys(path for path in _REDIRECT.findall(command)
                                           if not path.startswith("/dev/")))
    return list(paths)


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
