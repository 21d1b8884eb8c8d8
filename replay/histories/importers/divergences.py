"""How an executed output differs from the recorded one: not at all, benignly, or really.

A benign difference comes from where or when the command ran, not from what the repository holds:
git's short hashes (their length depends on the object count), interpreter and site-packages paths,
Python versions, timestamps, `ls -l` dates, owners and column widths, its `total` line (blocks
allocated) and its folders' modes, link counts and sizes (the file system's: git records none of
them), the order of lines of `grep -r` or `find` (directory order), random nonces (temporary names,
memory addresses, uuids). Each kind is a mask; outputs equal once masked differ benignly, and the
kinds that made them equal are named. Anything else is real, reported at the first line that really
differs, with the column where it departs, so two lines with the same start are told apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from replay.histories.importers.recorded import Expected

_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds)\b")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_MASKS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("interpreter paths", re.compile(
        r"(?:/[\w.+-]+)*/(?:lib/python\d[\d.]*|bin/python\d?[\d.]*|site-packages)\b"),
     "<python>"),
    ("interpreter paths", re.compile(r"\b(?:Python|python|CPython) ?\d+\.\d+(?:\.\d+)?\+?"),
     "<python>"),
    ("ls dates", re.compile(
        rf"^([-dlcbps][-rwxsStT.+@]{{9,10}})\s+(\d+)\s+\S+\s+\S+\s+([\d,]+)\s+{_MONTH}\s+"
        r"\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})", re.M), r"\1 \2 <owner> \3 <date>"),
    # a folder's mode, link count and size are the file system's: git records none of them
    ("ls folder entries", re.compile(
        r"^d[-rwxsStT.+@]{9,10} \d+ <owner> [\d,]+ <date>", re.M),
     "d<mode> <links> <owner> <size> <date>"),
    ("ls totals", re.compile(r"^total \d+(?:\.\d+)?[KMG]?$", re.M), "total <blocks>"),
    ("timestamps", re.compile(
        r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"),
     "<time>"),
    ("timestamps", re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"), "<time>"),
    ("random nonces", re.compile(
        r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b0x[0-9a-fA-F]{6,}\b|"
        r"\btmp[\w-]{6,}|pytest-of-[\w-]+/pytest-\d+"), "<nonce>"),
    ("git short-hash length", re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),
     "<hash>"),
)
_UNORDERED = re.compile(r"(?:^|[;&|(]\s*)(?:grep\s+(?:-\w*\s+)*-\w*[rR]\w*|rgrep|find)\b")


@dataclass(frozen=True)
class Divergence:
    """A recorded output that execution did not reproduce; `benign` names why it does not
    matter (empty for a real divergence)."""

    reason: str
    benign: tuple[str, ...] = ()

    def describe(self) -> str:
        """The line reported for it."""
        if self.benign:
            return f"benign ({', '.join(self.benign)}): {self.reason}"
        return self.reason


def normalize(text: str) -> str:
    """Output as compared: trailing spaces and blank lines dropped, durations masked."""
    lines = [_DURATION.sub("<duration>", line.rstrip()) for line in text.strip("\n").splitlines()]
    return "\n".join(lines).strip()


def compare(expected: Expected, output: str, exit_code: int | None,
            command: str = "") -> Divergence | None:
    """How an executed output differs from the recorded one, or None when it matches."""
    if expected.text is None:
        return None
    if (expected.exit_code is not None and exit_code is not None
            and expected.exit_code != exit_code):
        return Divergence(f"exit code {exit_code}, recorded {expected.exit_code}")
    got, want = normalize(output), normalize(expected.text)
    if expected.tail is not None:
        tail = normalize(expected.tail)
        if got.startswith(want) and got.endswith(tail):
            return None
        return _classify(want, got[:len(want)], command) or Divergence(
            "output differs from the recorded head and tail")
    if got == want:
        return None
    found = _classify(want, got, command)
    return found or Divergence(first_difference(want, got, command))


def _classify(want: str, got: str, command: str) -> Divergence | None:
    """The benign kinds that make two different outputs equal, as a divergence; else None.
    A kind counts when what it masks differs between the two outputs."""
    kinds: list[str] = []
    for kind, pattern, mask in _MASKS:
        if _matches(pattern, want) != _matches(pattern, got) and kind not in kinds:
            kinds.append(kind)
        want, got = pattern.sub(mask, want), pattern.sub(mask, got)
        if want == got:
            return Divergence(f"equal once {', '.join(kinds)} are masked", tuple(kinds))
    if _UNORDERED.search(command) and sorted(want.splitlines()) == sorted(got.splitlines()):
        kinds.append("line order of a recursive search")
        return Divergence("the same lines in another order", tuple(kinds))
    return None


def _matches(pattern: re.Pattern[str], text: str) -> list[str]:
    return [match.group(0) for match in pattern.finditer(text)]


def masked(text: str, command: str = "") -> list[str]:
    """The lines of an output with every benign kind masked (sorted for a recursive search)."""
    for _kind, pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    lines = text.splitlines()
    return sorted(lines) if _UNORDERED.search(command) else lines


def first_difference(want: str, got: str, command: str = "") -> str:
    """The first line that really differs (benign kinds masked), with the column where it
    departs and the lines shown from a little before it."""
    wanted, gotten = masked(want, command), masked(got, command)
    for number, (recorded, executed) in enumerate(zip(wanted, gotten, strict=False), start=1):
        if recorded != executed:
            column = next((i for i, (a, b) in enumerate(zip(recorded, executed, strict=False))
                           if a != b), min(len(recorded), len(executed)))
            start = max(0, column - 20)
            return (f"output differs at line {number}, column {column + 1}: recorded "
                    f"{_window(recorded, start)!r}, got {_window(executed, start)!r}")
    if len(wanted) > len(gotten):
        return f"output is shorter: recorded line {len(gotten) + 1} " \
               f"{_window(wanted[len(gotten)], 0)!r} missing"
    return f"output is longer: got extra line {len(wanted) + 1} " \
           f"{_window(gotten[len(wanted)], 0)!r}"


def _window(line: str, start: int) -> str:
    shown = line[start:start + 80]
    return ("..." if start else "") + shown + ("..." if start + 80 < len(line) else "")
