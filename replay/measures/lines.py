"""The details of a text that span tokens or need the start of a line, found on the whole text:
error types with the rest of their line, pytest's `E   ...` lines, `$ command` lines and numbers
with a unit word (`16 passed`); and the tool lines blanked before anything is read (a diff's
`index` line, a tool's banner version). `replay.measures.details` reads the rest token by token.
"""

from __future__ import annotations

import re

from replay.compaction.anchors import ERROR_TYPE

VALUE_CAP = 200  # error messages and commands longer than this keep their first 200 characters
UNITS = (r"(?:ms|s|sec|secs|seconds|min|minutes|h|hours|[KMGT]i?B|bytes|px|tokens|lines|files"
         r"|tests|passed|failed|errors|skipped|warnings|items)\b")
ERROR_ENDS = ("Error", "Exception", "Warning", "Failure", "Fault", "Exit", "Interrupt")
ERROR_TYPE_PATTERN = re.compile(ERROR_TYPE)
_ERROR_END = re.compile(r"(Error|Exception|Warning|Failure|Fault|Exit|Interrupt)\b"
                        r"(?::[ \t]*([^\n]*))?")
_PYTEST_E = re.compile(r"^E {2,}(\S[^\n]*)", re.MULTILINE)
# The unit word of `16 passed`, `512 MB`: the space opens the pattern, so the regex engine scans
# for it quickly, and the look-behind drops a space after anything but a number at once.
_COUNTED = re.compile(r" (?<=[\d.] )" + UNITS)
_WORD_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_."
# Blob ids of a diff's `index` line; a tool's banner version and build id (`tsup v8.3.5` ending a
# line, `bun install v1.3.13 (bf2e2cec)`, `Bun v1.3.13 (Linux x64)`): the tool's, not the work's.
# Both patterns open with a literal, which the regex engine scans for quickly.
_INDEX_LINE = re.compile(r"\nindex [0-9a-f]{7,}\.\.[0-9a-f]{7,}(?: \d+)?(?=\n|$)")
_BANNER = re.compile(r" v\d+\.\d+\.\d+(?: \([\w ]+\))?(?=\n|$)")


def without_tool_lines(text: str) -> str:
    """`text` with diff index lines and tool banners' versions blanked (see `_BANNER`)."""
    spans = [match.span() for match in _INDEX_LINE.finditer(text)]
    spans += [match.span() for match in _BANNER.finditer(text)
              if match.start() > 0 and text[match.start() - 1].isalpha()]
    if not spans:
        return text
    pieces, last = [], 0
    for start, end in sorted(spans):
        pieces.append(text[last:start])
        last = max(last, end)
    return " ".join([*pieces, text[last:]])


def commands(text: str) -> list[str]:
    """The `$ command` lines of a text, found with `str.find`."""
    found = []
    begin = 2 if text.startswith("$ ") else _after(text.find("\n$ "))
    while begin >= 0:
        end = text.find("\n", begin)
        found.append(cap(text[begin:len(text) if end < 0 else end].strip()))
        begin = _after(text.find("\n$ ", begin)) if end >= 0 else -1
    return found


def _after(newline: int) -> int:
    """Where a command starts after a `\n$ ` found at `newline` (-1: none found)."""
    return newline + 3 if newline >= 0 else -1


def counted_numbers(text: str) -> list[str]:
    """Numbers followed by a unit word, `16 passed`, in order of sight."""
    numbers = []
    for match in _COUNTED.finditer(text):
        before = text[max(match.start() - 24, 0):match.start()]
        digits = len(before) - len(before.rstrip("0123456789."))
        number = before[len(before) - digits:].lstrip(".")
        head = before[:len(before) - digits]
        if number and number[0].isdigit() and not (head and head[-1] in _WORD_CHARS):
            numbers.append(number + match.group())
    return numbers


def errors(text: str, tokens: str | None = None) -> list[tuple[str, str]]:
    """Error types with the rest of their line, and pytest's `E   ` lines, as (kind, value) in
    order of sight (`error_type`, `error_message`). `tokens`, the text's distinct
    whitespace-separated tokens joined by newlines, is where the ending words are looked for
    first: one it lacks is not looked for in the text."""
    found, seen = [], set()
    for match in _error_ends(text, tokens):
        before = text[max(match.start() - 120, 0):match.start()]
        line = before[before.rfind("\n") + 1:] + match.group()
        if line in seen:
            continue
        seen.add(line)
        start = match.start() - (len(before) - len(before.rstrip(_WORD_CHARS)))
        error = ERROR_TYPE_PATTERN.fullmatch(text, start, match.end(1))
        if error is None:
            continue
        found.append(("error_type", error.group()))
        if match.group(2):
            found.append(("error_message", cap(f"{error.group()}: {match.group(2).rstrip()}")))
    start = 0 if text.startswith("E  ") else _line_start(text.find("\nE  "))
    while start >= 0:  # each line opening with `E  `, found with `str.find`
        match = _PYTEST_E.match(text, start)
        if match:
            found.append(("error_message", cap(match.group(1).rstrip())))
        start = _line_start(text.find("\nE  ", start))
    return found


def _line_start(newline: int) -> int:
    """Where a line starts after a newline found at `newline` (-1: none found)."""
    return newline + 1 if newline >= 0 else -1


def _error_ends(text: str, tokens: str | None) -> list[re.Match[str]]:
    """The matches of `_ERROR_END` that `finditer` gives, found faster: each ending word is
    found with `str.find` (unless `tokens` lacks it), and the pattern tried there, left to
    right, none inside another."""
    starts: list[int] = []
    for word in ERROR_ENDS if tokens is None else [w for w in ERROR_ENDS if w in tokens]:
        start = text.find(word)
        while start >= 0:
            starts.append(start)
            start = text.find(word, start + 1)
    matches, end = [], 0
    for start in sorted(starts):
        match = _ERROR_END.match(text, start) if start >= end else None
        if match:
            matches.append(match)
            end = match.end()
    return matches


def cap(text: str) -> str:
    """`text` cut to `VALUE_CAP` characters."""
    return text if len(text) <= VALUE_CAP else text[:VALUE_CAP].rstrip()
