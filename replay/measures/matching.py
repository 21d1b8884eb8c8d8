"""Whether a text holds a value: whole tokens for every type, and the forms of a path.

A value is found only as a whole token, with the boundaries its type allows (`BOUNDS`): `str`
is not in "instructions", `request` not in "requested", `int` not in "print", `1.2.3` not in
`11.2.3`, `src/x.py` not inside `/repo/src/x.py` (that is a path form, below). A value starting
(ending) with a word character needs a character before (after) it that is none of the type's
joining characters; an edge that is punctuation is its own boundary.

A path counts as kept in one of its forms (`PathForms`), and the form is named:

- `literal`: as the reference wrote it;
- `relative`: relative to a root (the session's working directory, the repository root:
  `/testbed` for replay's sweeps) when the reference wrote it under that root;
- `absolute`: under a root, when the reference wrote it relative to one;
- `suffix`: its last two or more components, when no other path the history named ends so.

With `literal` only (`PathForms(literal=True)`) a path is kept as written or not at all: the
study's strict rule.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from replay.measures.lines import counted_numbers

_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# Characters that join a value to what is around it, by type: (before, after).
BOUNDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "path": (frozenset("./-~"), frozenset("/-")),
    "test_id": (frozenset("./"), frozenset("[")),
    "url": (frozenset("/:"), frozenset("/-")),
    "host": (frozenset(".-@"), frozenset("-")),
    "version": (frozenset("."), frozenset()),
    "hash": (frozenset("-"), frozenset("-")),
}
_GLUED_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:%|[A-Za-z]+)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_EDGES = ".,;:!?'\"`()[]{}<>"
_PATH_RUN = re.compile(r"[\w.~@+/-]+")
_MARKS = ("://", "::", "/")
_DOTTED_AFTER = frozenset(("path", "host", "version"))  # `x.py` is not in `x.py.bak`


def whole_at(text: str, start: int, end: int, kind: str) -> bool:
    """Whether `text[start:end]` stands as a whole token of `kind` (see the module docstring)."""
    before, after = BOUNDS.get(kind, (frozenset(), frozenset()))
    if start > 0 and text[start] in _WORD:
        char = text[start - 1]
        if char in _WORD or char in before:
            return False
    if end < len(text) and text[end - 1] in _WORD:
        char = text[end]
        if char in _WORD or char in after:
            return False
        if char == "." and kind in _DOTTED_AFTER and text[end + 1:end + 2] in _WORD:
            return False
    return True


def find_whole(text: str, value: str, kind: str) -> bool:
    """Whether `value` occurs in `text` as a whole token of `kind`."""
    start = text.find(value)
    while start >= 0:
        if whole_at(text, start, start + len(value), kind):
            return True
        start = text.find(value, start + 1)
    return False


class Occurrences:
    """Whole-token look-ups in a text, answered on less than the whole text.

    A value without whitespace can only lie inside one whitespace-separated token, so it is
    looked for among the distinct tokens (a value holding `://`, `::` or `/` only among the
    tokens that hold it too). A number with its unit is looked for among the text's own numbers
    with units, whole: `16 passed` is not found in `116 passed`, nor `38ms` in `738ms`. A value
    of several parts (a command, an error message) is looked for in the text only when its parts
    can lie there as it holds them (`_may_hold`).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = dict.fromkeys(text.split())
        self.joined = "\n".join(self.tokens)
        self._counted: set[str] | None = None
        self._cores: set[str] | None = None
        self._paths: set[str] | None = None
        self._marked: dict[str, str] = {}
        self._bounded: str | None = None

    def __contains__(self, value: str) -> bool:
        return self.has("", value)

    def has(self, kind: str, value: str) -> bool:
        """Whether the text holds `value` as a whole token of `kind` ("" for any kind)."""
        if value in self.tokens:
            return True
        parts = value.split()
        if len(parts) == 1 and parts[0] == value:
            if _GLUED_NUMBER.fullmatch(value):
                if self._cores is None:
                    self._cores = {token.strip(_EDGES) for token in self.tokens}
                return value in self._cores
            if kind == "path" and "/" in value[:-1] and not value.endswith("/"):
                return value in self._path_runs()  # a folder (`src/`) may open a longer path
            marker = next((mark for mark in _MARKS if mark in value), "")
            return find_whole(self._with(marker) if marker else self.joined, value, kind)
        if len(parts) == 2 and _NUMBER.fullmatch(parts[0]):
            if self._counted is None:
                self._counted = set(counted_numbers(self.text))
            return value in self._counted
        if len(parts) > 1 and not self._may_hold(parts):
            return False
        return find_whole(self.text, value, kind)

    def _may_hold(self, parts: list[str]) -> bool:
        """Whether the whitespace-separated parts of a value (two or more) can lie in the text as
        the value holds them: each part between two others is a token of the text, the first
        part ends a token and the last starts one. A value the text holds passes; most values
        it lacks fail here, on the distinct tokens, without a search of the whole text."""
        if any(part not in self.tokens for part in parts[1:-1]):
            return False
        if self._bounded is None:
            self._bounded = f"\n{self.joined}\n"
        return f"{parts[0]}\n" in self._bounded and f"\n{parts[-1]}" in self._bounded

    def _path_runs(self) -> set[str]:
        """The runs of path characters of the tokens holding a slash, without final dots: a path
        is a whole token exactly when it is one of them (nothing of a path may touch it)."""
        if self._paths is None:
            self._paths = {run.rstrip(".") for run in _PATH_RUN.findall(self._with("/"))}
        return self._paths

    def _with(self, mark: str) -> str:
        if mark not in self._marked:
            self._marked[mark] = "\n".join(token for token in self.tokens if mark in token)
        return self._marked[mark]


@dataclass
class PathForms:
    """The roots a path may be written relative to, and the paths its suffixes must not fit."""

    roots: tuple[str, ...] = ()
    literal: bool = False
    _suffixes: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, roots: Iterable[str], known: Iterable[str] = (),
           literal: bool = False) -> PathForms:
        """Forms for the roots given (empty ones dropped), with `known` the history's paths."""
        forms = cls(tuple(dict.fromkeys(root.rstrip("/") for root in roots if root.strip("/"))),
                    literal)
        forms.know(known)
        return forms

    def know(self, paths: Iterable[str]) -> None:
        """Count the suffixes of `paths` (one per path), so a suffix is used only when unique."""
        for path in dict.fromkeys(self.canonical(path) for path in paths):
            self._suffixes.update(_suffixes(path))

    def canonical(self, path: str) -> str:
        """One spelling for the forms of a path: relative to its root, without `./` or a final
        slash (the same detail however it was written)."""
        if self.literal:
            return path
        path = path.removeprefix("./").rstrip("/") or path
        for root in self.roots:
            if path.startswith(root + "/"):
                return path[len(root) + 1:]
        return path

    def kept(self, value: str, text: Occurrences) -> str:
        """The form in which `text` holds the path `value` ("" when none does)."""
        if text.has("path", value):
            return "literal"
        if self.literal:
            return ""
        relative = self.canonical(value)
        if relative != value and text.has("path", relative):
            return "relative"
        if not relative.startswith(("/", "~")):
            for root in self.roots:
                if f"{root}/{relative}" != value and text.has("path", f"{root}/{relative}"):
                    return "absolute"
        for suffix in _suffixes(relative):
            if self._suffixes[suffix] <= 1 and text.has("path", suffix):
                return "suffix"
        return ""


def _suffixes(path: str) -> list[str]:
    """The path's tails of two or more components, shorter than itself, longest first."""
    parts = path.strip("/").split("/")
    return ["/".join(parts[index:]) for index in range(1, len(parts) - 1)]
