"""The disorder check: a summary that shows finished work as work still to do.

A file counts as finished at a boundary only with evidence (`finished_files`): after its last
write before the boundary came a passing test run or a commit, and the messages after the
boundary (up to the next one) do not write it again. A file written and then left, or edited
again right after the boundary, was still being worked on.

The summary shows a file as pending (`pending_files`) when a unit of it names the file and is
governed by a pending phrase: the same sentence or list item holds a future-tense phrase ("will",
"next", "still need to", "TODO", "not yet", ...), or the item sits under a heading that names
pending work ("Pending Tasks:", "Next steps"). The work the phrase governs must be an edit
("implement", "fix", "update", "rewrite", ...): an imperative opens the unit (`- Fix x.go`), or
an editing verb comes within `GOVERNED_WORDS` words after the pending phrase, in its clause
(`will update`, `still needs to be fixed`; not "pending - the fix was applied"). Pending work
that only stages, commits, verifies or reviews a file is real work left: in "Need to verify no
test broke from the x.go changes" what is left is to verify, and "changes" is a noun.
Fenced code, quoted lines (`> `) and quoted strings are left out: a phrase inside quoted output or
code governs nothing. "should" and "must" are not pending phrases: they occur in past-tense
corrections and test output.

A flag is a finished file that the summary shows as pending. The check is experimental while
its precision on the validation set (`VALIDATED_FLAGS`, recomputed by
scripts/validate_retention.py) is unmeasured or under `MIN_PRECISION`, as `validation_status`
says.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence

from replay.compaction.anchors import parse_arguments, shell_command
from replay.compaction.transcript import call_arguments, tool_calls
from replay.measures.retention import written_files
from replay.models.types import Message

PENDING = re.compile(r"\b(?:next|todo|to-do|still needs? to|not yet|yet to|left to|needs? to|"
                     r"will|going to|remaining|remains to|pending|outstanding)\b", re.IGNORECASE)
# Pending work *on* a file: to stage, commit, verify, run or review a finished file is real work
# left, not a finished edit shown as unfinished.
_EDIT_STEMS = (r"(?:implement|add|fix|updat|writ|rewrit|creat|chang|modif|refactor|edit|finish"
               r"|complet|renam|mov|delet|extend|replac)")
# Whole words: an editing verb the pending phrase governs (`will fix`, `to be fixed`, `not yet
# implemented`), and the imperative that opens a unit (`- Fix x.go`; not `Fixed x.go`, `Fixes`).
EDITING = re.compile(_EDIT_STEMS + r"(?:e|ed|d|ing|ten|y|ied)?", re.IGNORECASE)
IMPERATIVE = re.compile(_EDIT_STEMS + r"(?:e|y)?", re.IGNORECASE)
GOVERNED_WORDS = 4
_WORDS = re.compile(r"[A-Za-z][\w'-]*")
_CLAUSE_END = re.compile(r"[;,(—–]| - |\.(?:\s|$)")  # not `:`, which opens `TODO: fix x`
_HEADING = re.compile(r"^\s*(?:#+\s*.*|(?:\d+[.)]|[-*])?\s*\**[A-Z][^:\n]{0,60}:\**\s*)$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*])")
_QUOTED = re.compile(r"\"[^\"\n]*\"")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TEST = re.compile(r"\b(?:pytest|go test|npm (?:run )?test|yarn test|pnpm test|bun test|cargo test"
                   r"|jest|vitest|mise run test|make test|tox|unittest|rspec)\b")
_FAILED = re.compile(r"\bFAIL(?:ED|URE|S)?\b|\bfailed\b|\bError\b|\bpanic:|exit (?:code|status) "
                     r"[1-9]")
_PASSED = re.compile(r"\bpassed\b|^ok\s|\bPASS\b|\bOK\b|0 failed", re.MULTILINE)
_COMMIT = re.compile(r"\bgit\b[^|;&]*\bcommit\b")
# The check on the validation set (tests/fixtures/validation): its flags, and how many of them
# were labelled finished-shown-as-pending. A test recomputes both.
VALIDATED_FLAGS = 0
VALIDATED_TRUE = 0
MIN_PRECISION = 0.8


def finished_files(before: Sequence[Message], after: Sequence[Message]) -> list[str]:
    """Files whose last write before the boundary is followed by a passing test run or a
    commit, and that `after` does not write again (see the module docstring)."""
    outputs = {message.get("tool_call_id"): str(message.get("content") or "")
               for message in before if message.get("role") == "tool"}
    last_write: dict[str, int] = {}
    evidence: list[int] = []
    for index, message in enumerate(before):
        for path in written_files([message]):
            last_write[path] = index
        for call in tool_calls(message):
            command = shell_command(parse_arguments(call_arguments(call)))
            output = outputs.get(call.get("id"), "")
            if command and (_COMMIT.search(command) or (_TEST.search(command) and _passed(output))):
                evidence.append(index)
    again = {posixpath.basename(path) for path in written_files(after)}
    return [path for path, index in last_write.items()
            if any(done > index for done in evidence) and posixpath.basename(path) not in again]


def _passed(output: str) -> bool:
    return bool(_PASSED.search(output)) and not _FAILED.search(output)


def governed_units(summary: str) -> list[str]:
    """The sentences and list items of the summary that a pending phrase governs."""
    units, under_pending, in_code = [], False, False
    for line in summary.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code or line.lstrip().startswith(">"):
            continue
        if _HEADING.match(line):
            under_pending = bool(PENDING.search(line))
            continue
        text = _QUOTED.sub(" ", line)
        if under_pending and text.strip():
            units.append(text)
            continue
        units += [sentence for sentence in _SENTENCE.split(text) if PENDING.search(sentence)]
    return units


def governs_an_edit(unit: str) -> bool:
    """Whether the work a governed unit leaves is an edit: an editing verb opens it or comes
    within `GOVERNED_WORDS` words after one of its pending phrases."""
    if any(IMPERATIVE.fullmatch(word) for word in _WORDS.findall(unit)[:GOVERNED_WORDS]):
        return True
    return any(EDITING.fullmatch(word) for match in PENDING.finditer(unit)
               for word in _WORDS.findall(_CLAUSE_END.split(unit[match.end():], 1)[0])[
                   :GOVERNED_WORDS])


def pending_files(paths: Iterable[str], summary: str) -> list[str]:
    """Basenames of `paths` that a governed unit of the summary names as a file to edit."""
    names = {posixpath.basename(path.rstrip("/")) for path in paths} - {""}
    units = [unit for unit in governed_units(summary) if governs_an_edit(unit)]
    return sorted(name for name in names if any(_names(unit, name) for unit in units))


def _names(unit: str, name: str) -> bool:
    """Whether `unit` holds `name` with no word character, dot or dash before it and no word
    character or dash after it (found with `str.find`: no pattern is compiled per name)."""
    start = unit.find(name)
    while start >= 0:
        end = start + len(name)
        if not (start and _joins(unit[start - 1], ".-")) and not (
                end < len(unit) and _joins(unit[end], "-")):
            return True
        start = unit.find(name, start + 1)
    return False


def _joins(char: str, marks: str) -> bool:
    """Whether `char` joins a name it touches: a word character or one of `marks`."""
    return char.isalnum() or char == "_" or char in marks


def disorder(before: Sequence[Message], after: Sequence[Message], summary: str,
             written: Iterable[str] | None = None) -> list[str]:
    """Finished files (with evidence) that the summary shows as pending work; `written`, the
    files `before` wrote when known, lets a summary that shows none of them as pending be
    answered without reading the evidence."""
    candidates = pending_files(written_files(before) if written is None else written, summary)
    if not candidates:
        return []
    return sorted(set(candidates) & set(pending_files(finished_files(before, after), summary)))


def validation_status() -> dict[str, object]:
    """Whether the check is experimental, with its precision on the validation set (None
    without a flag there) and the number of flags it was measured on."""
    precision = VALIDATED_TRUE / VALIDATED_FLAGS if VALIDATED_FLAGS else None
    return {"experimental": precision is None or precision < MIN_PRECISION,
            "validation_precision": precision, "validation_flags": VALIDATED_FLAGS}


def validation_status_text() -> str:
    """`validation_status` in a few words, for a printed report."""
    found = validation_status()
    figure = ("unmeasured" if found["validation_precision"] is None
              else f"{found['validation_precision']:.3f}")
    word = "experimental" if found["experimental"] else "validated"
    return f"{word}: precision {figure} on the validation set, {VALIDATED_FLAGS} flag(s)"
