"""The literal details of serialized messages, by type: what retention scores count.

One compiled pattern finds every type in a single pass over a text. At each position the types
are tried in a fixed order, so a URL is not counted again as a path, nor a path's pieces as
identifiers. The URL, test id, path and error type patterns are the `anchor_index` baseline's
(`replay.compaction.anchors`), so the baseline and the score see the same values.

Types (`KINDS`):

- `path` `/testbed/a/b.py`, `src/x.py`, `./run.sh`, `setup.cfg`
- `test_id` `tests/test_x.py::TestY::test_z[1]`
- `url` `https://...`
- `host` `localhost:8080`, `127.0.0.1`, `[::1]:8080`, `api.example.com`, and the host of a URL
- `error_type` `KeyError`, `iniconf.errors.InterpolationError`
- `error_message` `KeyError: 'x'` (a type and the rest of its line), pytest's `E   ...` lines
- `command` a shell command a tool call ran (its first line), `$ cmd` lines
- `version` `1.2.3`, `v2.0.1`, `6.0.0rc2`, `==7.4`
- `hash` hex of 7 to 64 characters holding a digit and a letter, UUIDs
- `number` a number with its unit: `3.21s`, `512 MB`, `95%`, `16 passed`
- `identifier` snake_case, camelCase, dotted.names, a called `name(`, a defined `def name`

Secrets (API keys and tokens of known formats, private keys, the value after `password=` or
`API_KEY:`) are found too and set apart: a compactor is right to redact them, so a reference
never holds one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from replay.compaction.anchors import (
    ERROR_TYPE,
    PATH_PATTERN,
    TEST_ID_PATTERN,
    URL_PATTERN,
    argument_strings,
    parse_arguments,
    shell_command,
)
from replay.compaction.transcript import call_arguments, call_name, message_text, tool_calls
from replay.models.types import Message

KINDS = ("path", "test_id", "url", "host", "error_type", "error_message", "command", "version",
         "hash", "number", "identifier")
TITLES = {"path": "paths", "test_id": "test ids", "url": "URLs", "host": "hosts and ports",
          "error_type": "error types", "error_message": "error messages", "command": "commands",
          "version": "versions", "hash": "hashes", "number": "numbers with units",
          "identifier": "identifiers"}
VALUE_CAP = 200  # error messages and commands longer than this keep their first 200 characters

_SECRET = re.compile(
    r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{20,}"
    r"|AKIA[0-9A-Z]{16}|xox[abposr]-[\w-]{10,}|AIza[\w-]{30,}|Bearer ([\w.~+/-]{16,}=*)"
    r"|eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
# On the lower-cased text: the value after a key that names a secret.
_KEYED = re.compile(
    r"(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"([^\s\"',;]{8,})"
)
_KEYED_ANY_CASE = re.compile(_KEYED.pattern, re.IGNORECASE)
_HOST = (
    r"\[[0-9a-fA-F:]+\]:\d{1,5}"
    r"|(?<![\w.-])(?:localhost|(?:\d{1,3}\.){3}\d{1,3}"
    r"|(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|ai|app|cloud|local|internal|edu|gov|co))"
    r"(?::\d{1,5})?(?![\w.-])"
)
_VERSION = (
    r"(?<![\w.])v?\d+(?:\.\d+){2,}(?:[-+.]?[A-Za-z][\w.+]*)?(?![\w.])"
    r"|(?<=[=@])\d+(?:\.\d+)+(?:[-+.]?[A-Za-z][\w.+]*)?|(?<![\w.])v\d+\.\d+(?![\w.])"
)
_HASH = (
    r"(?<![\w-])(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64})(?![\w-])"
)
_UNITS = (r"(?:ms|s|sec|secs|seconds|min|minutes|h|hours|[KMGT]i?B|bytes|px|tokens|lines|files"
          r"|tests|passed|failed|errors|skipped|warnings|items)\b")
_IDENTIFIER = (
    r"(?<![\w.])(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z]\w*_\w*|_+[A-Za-z]\w*"
    r"|[a-z]\w*[A-Z]\w*|[A-Z]+[a-z]\w*[A-Z]\w*|[A-Z]{2,}[a-z]\w*|[A-Za-z]\w*(?=\())"
)
# Tried on each distinct whitespace-separated token that is not a plain word.
TOKEN_PATTERN = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in (
    ("url", URL_PATTERN.pattern), ("test_id", TEST_ID_PATTERN.pattern), ("host", _HOST),
    ("path", PATH_PATTERN.pattern), ("version", _VERSION), ("hash", _HASH),
    ("number", rf"(?<![\w.])\d+(?:\.\d+)?(?:%|{_UNITS})"), ("identifier", _IDENTIFIER))))
# Found on the whole text: what spans tokens or needs the start of a line.
_ERROR_END = re.compile(r"(Error|Exception|Warning|Failure|Fault|Exit|Interrupt)\b"
                        r"(?::[ \t]*([^\n]*))?")
_ERROR_TYPE = re.compile(ERROR_TYPE)
_PYTEST_E = re.compile(r"^E {2,}(\S[^\n]*)", re.MULTILINE)
_COMMAND = re.compile(r"^\$ ([^\n]+)", re.MULTILINE)
_COUNTED = re.compile(" " + _UNITS)  # the unit word of `16 passed`, `512 MB`
_URL_HOST = re.compile(r"https?://(?:[^@/\s]*@)?([^/?#\s]+)")
_KEYWORDS = frozenset({"if", "for", "while", "return", "and", "or", "not", "in", "is", "print",
                       "with", "elif", "else", "lambda", "yield", "assert", "raise", "import",
                       "from", "as", "function", "new", "typeof", "switch", "catch", "def"})
_EDGES = ".,;:!?'\"`()[]{}<>"
_TRAILING = ".,;:!?'\")]}"
_WORD_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_."


@dataclass
class Details:
    """Values by kind, each kind in order of first sight without repeats, and the secrets."""

    values: dict[str, dict[str, None]] = field(
        default_factory=lambda: {kind: {} for kind in KINDS})
    secrets: set[str] = field(default_factory=set)

    def add(self, kind: str, value: str) -> None:
        """Keep `value` under `kind` unless it is empty or already there."""
        if value:
            self.values[kind].setdefault(value, None)

    def update(self, other: Details) -> None:
        """Add every value and secret of `other`, after this one's."""
        for kind in KINDS:
            self.values[kind].update(other.values[kind])
        self.secrets |= other.secrets

    def count(self) -> int:
        """How many values there are, secrets not counted."""
        return sum(len(values) for values in self.values.values())


def find_details(text: str) -> Details:
    """The details of `text` (see the module docstring)."""
    found = Details()
    _find_secrets(found, text)
    _find_errors(found, text)
    for match in _COMMAND.finditer(text):
        found.add("command", _cap(match.group(1).strip()))
    numbers = _counted(text)
    for token in dict.fromkeys(text.split()):
        core = token.strip(_EDGES)
        if core and not (core.isalpha() and (core.islower() or core.istitle() or core.isupper())):
            _classify(found, token)
    numbers.extend(found.values["number"])
    found.values["number"] = dict.fromkeys(sorted(dict.fromkeys(numbers), key=text.find))
    return found


def _find_secrets(found: Details, text: str) -> None:
    """Tokens of known formats, and the value after a key that names a secret."""
    for match in _SECRET.finditer(text):
        found.secrets.add(match.group(1) or match.group())
    lowered = text.lower()
    keyed = (_KEYED.finditer(lowered) if len(lowered) == len(text)
             else _KEYED_ANY_CASE.finditer(text))
    found.secrets.update(text[match.start(1):match.end(1)].rstrip(_TRAILING) for match in keyed)


def _counted(text: str) -> list[str]:
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


def _find_errors(found: Details, text: str) -> None:
    """Error types with the rest of their line, and pytest's `E   ` lines."""
    for match in _ERROR_END.finditer(text):
        before = text[max(match.start() - 120, 0):match.start()]
        start = match.start() - (len(before) - len(before.rstrip(_WORD_CHARS)))
        error = _ERROR_TYPE.fullmatch(text, start, match.end(1))
        if error is None:
            continue
        found.add("error_type", error.group())
        if match.group(2):
            found.add("error_message", _cap(f"{error.group()}: {match.group(2).rstrip()}"))
    for match in _PYTEST_E.finditer(text):
        found.add("error_message", _cap(match.group(1).rstrip()))


def _classify(found: Details, token: str) -> None:
    for match in TOKEN_PATTERN.finditer(token):
        kind, value = match.lastgroup or "", match.group()
        if kind == "url":
            url = value.rstrip(_TRAILING)
            found.add("url", url)
            host = _URL_HOST.match(url)
            if host:
                found.add("host", host.group(1))
        elif kind == "path":
            _add_path(found, value.rstrip(_TRAILING))
        elif kind == "identifier":
            if (value not in _KEYWORDS and all(len(part) > 1 for part in value.split("."))
                    and not _ERROR_TYPE.fullmatch(value)):
                found.add("identifier", value)
        elif kind == "test_id":
            found.add(kind, _balanced(value.rstrip(_TRAILING.replace("]", ""))))
        else:
            found.add(kind, value)


def _balanced(value: str) -> str:
    """A test id without the `]` closing something outside it (`[id]`), keeping `test[1]`."""
    while value.endswith("]") and value.count("]") > value.count("["):
        value = value[:-1].rstrip(_TRAILING.replace("]", ""))
    return value


def _add_path(found: Details, value: str) -> None:
    """A path with a letter, rooted, relative or with an extension (not `and/or`)."""
    if not any(char.isalpha() for char in value) or not value.strip("/"):
        return
    if value.startswith(("/", "~", "./", "../")) or value.count("/") >= 2 or "." in value:
        found.add("path", value)


def _cap(text: str) -> str:
    return text if len(text) <= VALUE_CAP else text[:VALUE_CAP].rstrip()


def message_payload(message: Message) -> str:
    """The text one message adds: its content, then each tool call as a `$ command` line for a
    shell command, or its name and the strings of its arguments (decoded from JSON)."""
    parts = [message_text(message)]
    for call in tool_calls(message):
        arguments = parse_arguments(call_arguments(call))
        command = shell_command(arguments).split(" ⏎ ")[0]
        parts.append(f"$ {command}" if command else call_name(call))
        parts.extend(argument_strings(arguments))
    return "\n".join(part for part in parts if part)


def serialize(messages: Iterable[Message]) -> str:
    """The payloads of `messages`, one after another, separated by blank lines."""
    return "\n\n".join(message_payload(message) for message in messages)


def details_of(messages: Sequence[Message], max_chars: int, tail: bool = False) -> Details:
    """The details of the first (or with `tail`, the last) `max_chars` serialized characters."""
    text = serialize(messages)
    if len(text) > max_chars:
        text = text[-max_chars:] if tail else text[:max_chars]
    return find_details(text)
