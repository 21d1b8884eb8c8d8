"""Find the literal details of a history: paths, test ids, errors, commands, URLs, identifiers,
numbers, each with the places it was seen. The `anchor_index` baseline renders them.

Extraction is regular expressions over each message's text and each tool call's arguments, tuned
for recall of literal values (the scoring asks whether a recurring value appears in the summary).
Within a text, URLs, test ids and paths are found first and blanked out, so that their pieces do
not come back as identifiers or numbers.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from replay.compaction.transcript import (
    call_arguments,
    call_name,
    message_text,
    tool_calls,
    tool_name,
    tool_names,
)
from replay.models.types import Message

KINDS = (
    "paths",
    "test ids",
    "error messages",
    "error types",
    "commands",
    "urls",
    "identifiers",
    "numbers",
)

EXTENSIONS = (
    "py|pyi|pyx|pxd|ipynb|js|mjs|cjs|ts|tsx|jsx|json|toml|ya?ml|cfg|ini|txt|md|rst|c|h|cc|cpp|hpp|"
    "go|rs|java|kt|rb|php|sh|bash|html|css|scss|xml|csv|tsv|lock|log|sql|patch|diff|in|conf|env"
)
URL_PATTERN = re.compile(r"https?://[^\s<>\"'`)\]}]+")
TEST_ID_PATTERN = re.compile(r"(?<![\w./-])[\w./-]*\w\.py::[^\s,;'\"()]+")
# Not glued after a format verb (`session-%s.json` names no file `s.json`).
PATH_PATTERN = re.compile(
    r"(?<![\w.~/@+%-])(?:(?:~|\.\.?)?/?(?:[\w.@+-]+/)+[\w.@+-]*|(?:/[\w.@+-]+)+/?)"
    rf"|(?<![\w./%-])\w[\w.+-]*\.(?:{EXTENSIONS})(?![\w])"
)
ERROR_TYPE = r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Failure|Exit|Interrupt|Fault)"
_ERROR = re.compile(rf"(?<![\w.])({ERROR_TYPE})\b(?::[ \t]*([^\n]*))?")
_TOOL_ERROR = re.compile(r"(?m)^(?:error|fatal|ERROR|FATAL)(?:\[[\w-]+\])?:[ \t]*\S.*$")
_PYTEST_E = re.compile(r"(?m)^E {2,}(\S.*)$")
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):\n(?:[ \t]+.*\n|\n)*(\S.*)")
_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# Hex hashes that open with a letter (those opening with a digit are numbers).
_HEX = re.compile(r"(?<![\w])(?=[0-9a-f]*[0-9])[a-f][0-9a-f]{6,63}(?![\w])")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_DEFINITION = re.compile(r"(?:\bdef|\bclass|\bfunction|\bfn|, in)[ \t]+$")
# A number and what is glued to it: `112`, `3.21s`, `6.0.0rc2.dev51+g7f7a364`, `2024-05-01`.
_NUMBER = re.compile(r"(?<![\w.])\d[\w.+-]*")
_PROGRESS_OPEN = re.compile(r"\[[ \t]*$")  # pytest's `[ 42%]`
_CONTEXT_LINE = 120
_CONTEXT_SIDE = 50
_GUTTER = re.compile(r"[ \t]*\d+(?:[ \t]*[|│:\t→]|[ \t]{2,})")
_NUMBER_WORDS_BEFORE = {
    "line", "lines", "exit", "code", "status", "returncode", "port", "errno", "version", "step",
    "attempt", "pid", "issue", "pr", "index", "row", "column", "col", "offset", "size", "#",
}  # fmt: skip
_NUMBER_WORDS_AFTER = {
    "passed", "failed", "error", "errors", "skipped", "xfailed", "xpassed", "warning", "warnings",
    "deselected", "tests", "test", "items", "seconds", "s", "ms", "bytes", "lines", "files",
}  # fmt: skip
_KEYWORDS = {
    "if", "for", "while", "return", "and", "or", "not", "in", "is", "def", "class", "print",
    "with", "elif", "else", "lambda", "yield", "assert", "raise", "import", "from", "as",
    "function", "new", "typeof", "switch", "catch",
}  # fmt: skip
_COMMAND_KEYS = ("command", "cmd", "script")
_SHELL_TOOLS = re.compile(r"bash|shell|exec|run|terminal|command|cmd|sh\b", re.IGNORECASE)
_SHELLS = {"bash", "sh", "zsh"}
_MESSAGE_CAP = 300
_COMMAND_CAP = 400


@dataclass
class Anchor:
    """One literal value, where it was first described, and every place it was seen."""

    kind: str
    value: str
    context: str = ""
    where: list[str] = field(default_factory=list)


def find_anchors(messages: Sequence[Message]) -> dict[str, list[Anchor]]:
    """The history's anchors by kind (in `KINDS` order), each kind in order of first sight."""
    found: dict[tuple[str, str], Anchor] = {}
    for kind, value, context, where in _sightings(messages):
        anchor = found.setdefault((kind, value), Anchor(kind, value, context))
        if where not in anchor.where:
            anchor.where.append(where)
    grouped: dict[str, list[Anchor]] = {kind: [] for kind in KINDS}
    for anchor in found.values():
        grouped[anchor.kind].append(anchor)
    return grouped


def _sightings(messages: Sequence[Message]) -> Iterator[tuple[str, str, str, str]]:
    """(kind, value, context, where) for every detail, in message order."""
    names = tool_names(messages)
    for index, message in enumerate(messages):
        role = str(message.get("role", "unknown"))
        where = f"#{index} {role}"
        if role == "tool":
            where = f"#{index} tool:{tool_name(message, names)}"
        yield from _text_sightings(message_text(message), where)
        for call in tool_calls(message):
            call_where = f"#{index} {role}→{call_name(call)}"
            arguments = parse_arguments(call_arguments(call))
            command = shell_command(arguments)
            if command and (" " in command or _SHELL_TOOLS.search(call_name(call))):
                yield "commands", command, "", call_where
            yield from _text_sightings("\n".join(argument_strings(arguments)), call_where)


def _text_sightings(text: str, where: str) -> Iterator[tuple[str, str, str, str]]:
    if not text:
        return
    masked = text
    blanked = (("urls", URL_PATTERN), ("test ids", TEST_ID_PATTERN), ("paths", PATH_PATTERN))
    for kind, pattern in blanked:
        spans = []
        for match in pattern.finditer(masked):
            value = match.group().rstrip(".,;:!?'\"")
            if kind != "paths" or _plausible_path(value):
                yield kind, value, "", where
                spans.append(match.span())
        masked = _blank(masked, spans)
    yield from ((kind, value, "", where) for kind, value in _errors(text))
    yield from (("identifiers", value, "", where) for value in _identifiers(masked))
    yield from (("numbers", value, context, where) for value, context in _numbers(masked, text))


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the given spans replaced by spaces (offsets keep their meaning)."""
    pieces, last = [], 0
    for start, end in spans:
        pieces += [text[last:start], " " * (end - start)]
        last = end
    return "".join(pieces) + text[last:]


def _plausible_path(value: str) -> bool:
    """A path candidate with a letter in it that is not a bare `/` or `//`."""
    return any(char.isalpha() for char in value) and value.strip("/") != ""


def _errors(text: str) -> Iterator[tuple[str, str]]:
    """Error types and messages: `Type: message`, traceback last lines, tool error lines."""
    for match in _TRACEBACK.finditer(text):
        yield "error messages", _cap(match.group(1).strip(), _MESSAGE_CAP)
    for match in _ERROR.finditer(text):
        yield "error types", match.group(1)
        message = (match.group(2) or "").strip()
        if message:
            yield "error messages", _cap(f"{match.group(1)}: {message}", _MESSAGE_CAP)
    for match in _TOOL_ERROR.finditer(text):
        yield "error messages", _cap(match.group().strip(), _MESSAGE_CAP)
    for match in _PYTEST_E.finditer(text):
        yield "error messages", _cap(match.group(1).strip(), _MESSAGE_CAP)


def _identifiers(masked: str) -> Iterator[str]:
    """Dotted names, snake_case, CamelCase, defined or called names, and hex hashes."""
    for match in _WORD.finditer(masked):
        if _is_identifier(match, masked):
            yield match.group()
    for match in _HEX.finditer(masked):
        yield match.group()


def _is_identifier(match: re.Match[str], text: str) -> bool:
    word = match.group()
    if re.fullmatch(ERROR_TYPE, word):
        return False  # listed under error types
    if "." in word:
        return any(len(part) > 1 for part in word.split("."))  # not `e.g`
    if ("_" in word and any(char.isalpha() for char in word)) or _CAMEL.search(word):
        return True
    return word not in _KEYWORDS and len(word) > 1 and _named_in_code(text, match)


def _named_in_code(text: str, match: re.Match[str]) -> bool:
    """Whether a plain word is called (`name(`), defined (`def name`), or a traceback frame."""
    before = max(match.start() - 16, 0)
    return text.startswith("(", match.end()) or bool(
        _DEFINITION.search(text, before, match.start())
    )


def _numbers(masked: str, text: str) -> Iterator[tuple[str, str]]:
    """Numbers worth keeping, each with its line (or the words around it) from the original.

    Skipped: line-number gutters of file listings (a number opening a line and followed by a
    tab, `|`, `:` or two spaces), pytest's progress percentages, and one-digit integers without
    a telling word next to them (kept: `line 3`, `2 failed`).
    """
    for match in _NUMBER.finditer(masked):
        value = match.group().rstrip(".+-")
        start, end = match.start(), match.start() + len(value)
        line_start = masked.rfind("\n", 0, start) + 1
        line_end = masked.find("\n", end)
        line_end = len(masked) if line_end < 0 else line_end
        before = masked[line_start:start]
        if _GUTTER.match(masked, line_start) and not before.strip():
            continue
        if _PROGRESS_OPEN.search(before) and masked.startswith("%]", end):
            continue
        if len(value) == 1 and not _telling_neighbour(before, masked[end:line_end]):
            continue
        yield value, _context(text, line_start, line_end, start, end)


def _context(text: str, line_start: int, line_end: int, start: int, end: int) -> str:
    """The line of `text[start:end]`, or for a long line the whole words around it."""
    if line_end - line_start > _CONTEXT_LINE:
        left = text.rfind(" ", line_start, max(start - _CONTEXT_SIDE, line_start))
        right = text.find(" ", min(end + _CONTEXT_SIDE, line_end), line_end)
        line_start = line_start if left < 0 else left
        line_end = line_end if right < 0 else right
    return " ".join(text[line_start:line_end].split())


def _telling_neighbour(before: str, after: str) -> bool:
    words_before = re.findall(r"[#\w]+", before.lower())
    words_after = re.findall(r"\w+", after.lower())
    return bool(
        (words_before and words_before[-1] in _NUMBER_WORDS_BEFORE)
        or (words_after and words_after[0] in _NUMBER_WORDS_AFTER)
    )


def parse_arguments(arguments: str) -> Any:
    """A tool call's arguments as JSON, or the raw string when they are not JSON."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def argument_strings(value: Any) -> Iterator[str]:
    """Every string and number inside a JSON value (keys excluded), depth first, as text."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from argument_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from argument_strings(item)


def shell_command(arguments: Any) -> str:
    """The shell command a tool call ran, if its arguments name one; one line, capped."""
    if not isinstance(arguments, dict):
        return ""
    value = next((arguments[key] for key in _COMMAND_KEYS if key in arguments), None)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        shell_c = len(value) == 3 and value[0].rsplit("/", 1)[-1] in _SHELLS
        value = value[2] if shell_c and value[1] in ("-c", "-lc") else shlex.join(value)
    if not isinstance(value, str) or not value.strip():
        return ""
    return _cap(" ⏎ ".join(line.strip() for line in value.strip().splitlines()), _COMMAND_CAP)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
