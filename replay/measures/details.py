"""The literal details of serialized messages, by type: what retention scores count.

A text is read in a few passes, each over the text once. At each position of a token the types
are tried in a fixed order, so a URL is not counted again as a path, nor a path's pieces as
identifiers. The URL, test id, path and error type patterns are the `anchor_index` baseline's
(`replay.compaction.anchors`), so the baseline and the score see the same values.

Types (`KINDS`):

- `path` `/testbed/a/b.py`, `src/x.py`, `./run.sh`, `setup.cfg`
- `test_id` `tests/test_x.py::TestY::test_z[1]`
- `url` `https://...`
- `host` `localhost:8080`, `127.0.0.1`, `[::1]:8080`, `api.example.com` written on their own (the
  host of a URL is part of the URL; `github.com/x/y` is a module path)
- `error_type` `KeyError`, `iniconf.errors.InterpolationError`
- `error_message` `KeyError: 'x'` (a type and the rest of its line), pytest's `E   ...` lines
- `command` a shell command a tool call ran (its first line), `$ cmd` lines
- `version` `1.2.3`, `v2.0.1`, `6.0.0rc2`, `==7.4`
- `hash` hex of 7 to 64 characters holding a digit and a letter, UUIDs
- `number` a number with its unit: `512 MB`, `16 passed` (a unit word), `3.21s`, `95%` (glued)
- `identifier` snake_case, camelCase, dotted.names, a called `name(`

Secrets (API keys and tokens of known formats, private keys, the value after `password=` or
`API_KEY:`: `replay.measures.secrets`) are found too and set apart: a compactor is right to
redact them, so a reference never holds one.

Values of a kind come in order of first sight, except numbers: those written with a unit word
come first, then those glued to their unit. What spans tokens or starts a line (errors, `$`
commands, numbers with a unit word, secrets after their key) is found on the whole text; the
rest is found on the distinct whitespace-separated tokens, which is the same answer for values
without whitespace, read once each.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from replay.compaction.anchors import (
    ERROR_TYPE,
    EXTENSIONS,
    PATH_PATTERN,
    TEST_ID_PATTERN,
    URL_PATTERN,
    argument_strings,
    parse_arguments,
    shell_command,
)
from replay.compaction.transcript import call_arguments, message_text, tool_calls
from replay.measures.noise import noise_rule, strip_harness
from replay.measures.secrets import TRAILING, find_secrets
from replay.models.types import Message

KINDS = ("path", "test_id", "url", "host", "error_type", "error_message", "command", "version",
         "hash", "number", "identifier")
TITLES = {"path": "paths", "test_id": "test ids", "url": "URLs", "host": "hosts and ports",
          "error_type": "error types", "error_message": "error messages", "command": "commands",
          "version": "versions", "hash": "hashes", "number": "numbers with units",
          "identifier": "identifiers"}
VALUE_CAP = 200  # error messages and commands longer than this keep their first 200 characters

_HOST = (
    r"\[[0-9a-fA-F:]+\]:\d{1,5}"
    r"|(?<![\w.@-])(?:localhost|(?:\d{1,3}\.){3}\d{1,3}"
    r"|(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|ai|app|cloud|local|internal|edu|gov|co))"
    r"(?::\d{1,5})?(?![\w./-]|:\D)"  # not a module path, a git remote `host:x`, a mail domain
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
    r"(?<![\w.\\])(?!(?<=\*)_)(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z]\w*_\w*|_+[A-Za-z]\w*"
    r"|[a-z]\w*[A-Z]\w*|[A-Z]+[a-z]\w*[A-Z]\w*|[A-Z]{2,}[a-z]\w*|[A-Za-z]\w*(?=\((?![-+]\))))"
)
# Tried on each distinct whitespace-separated token that is not a plain word, in this order;
# a token is only tried with the kinds it can hold (`_kinds_for`), which gives the same matches.
TOKEN_KINDS = (
    ("url", URL_PATTERN.pattern), ("test_id", TEST_ID_PATTERN.pattern), ("host", _HOST),
    ("path", f"(?<!<)(?:{PATH_PATTERN.pattern})"),  # not the `/tag` of a closing `</tag>`
    ("version", _VERSION), ("hash", _HASH),
    ("number", rf"(?<![\w.])\d+(?:\.\d+)?(?:%(?!\])|{_UNITS})"),  # not pytest's `[ 42%]`
    ("identifier", _IDENTIFIER))
# Found on the whole text: what spans tokens or needs the start of a line.
_ERROR_END = re.compile(r"(Error|Exception|Warning|Failure|Fault|Exit|Interrupt)\b"
                        r"(?::[ \t]*([^\n]*))?")
_ERROR_TYPE = re.compile(ERROR_TYPE)
_PYTEST_E = re.compile(r"^E {2,}(\S[^\n]*)", re.MULTILINE)
# The unit word of `16 passed`, `512 MB`: the space opens the pattern, so the regex engine scans
# for it quickly, and the look-behind drops a space after anything but a number at once.
_COUNTED = re.compile(r" (?<=[\d.] )" + _UNITS)
_KEYWORDS = frozenset({"if", "for", "while", "return", "and", "or", "not", "in", "is", "print",
                       "with", "elif", "else", "lambda", "yield", "assert", "raise", "import",
                       "from", "as", "function", "new", "typeof", "switch", "catch", "def"})
_EDGES = ".,;:!?'\"`()[]{}<>"
_WORD_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_."
_HEX_WORD = re.compile(r"[0-9a-f]{7,64}")
_DIGIT = re.compile(r"\d")
_HOST_HINT = re.compile(r"\.(?:com|org|net|io|dev|ai|app|cloud|local|internal|edu|gov|co)\b")
_PATH_HINT = re.compile(rf"\w\.(?:{EXTENSIONS})(?!\w)")
_SHORT_PART = re.compile(r"(?:^|\.)\w(?:\.|$)")  # `e.g`: a one-letter part is no name
_ERROR_ENDS = ("Error", "Exception", "Warning", "Failure", "Fault", "Exit", "Interrupt")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_HOST_NAME = re.compile(_HOST)
# Blob ids of a diff's `index` line; a tool's banner version and build id (`tsup v8.3.5` ending a
# line, `bun install v1.3.13 (bf2e2cec)`, `Bun v1.3.13 (Linux x64)`): the tool's, not the work's.
# Both patterns open with a literal, which the regex engine scans for quickly.
_INDEX_LINE = re.compile(r"\nindex [0-9a-f]{7,}\.\.[0-9a-f]{7,}(?: \d+)?(?=\n|$)")
_BANNER = re.compile(r" v\d+\.\d+\.\d+(?: \([\w ]+\))?(?=\n|$)")
_GLOB = re.compile(r"\*[/._-]|/\*")  # a glob's star, not markdown's `**bold**`


@dataclass
class Reading:
    """What the texts of one session have shown so far, so that a token or a value met in
    several of them is judged once: each token's (kind, value) pairs, and each value's noise
    rule (`noise_rule`, with `project`, the working directory's `project_names`)."""

    project: frozenset[str] = frozenset()
    tokens: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    rules: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def rule(self, kind: str, value: str) -> str | None:
        """The noise rule `value`, found as `kind`, breaks (None: a detail)."""
        key = (kind, value)
        if key not in self.rules:
            self.rules[key] = noise_rule(kind, value, self.project)
        return self.rules[key]


@dataclass
class Details:
    """Values by kind, each kind in order of first sight without repeats, and the secrets."""

    values: dict[str, dict[str, None]] = field(
        default_factory=lambda: {kind: {} for kind in KINDS})
    secrets: set[str] = field(default_factory=set)
    noise: dict[str, str] = field(default_factory=dict)  # value: the noise rule it broke
    reading: Reading = field(default_factory=Reading)

    def add(self, kind: str, value: str) -> None:
        """Keep `value` under `kind` unless it is empty, already there, or noise (`noise`)."""
        if not value or value in self.values[kind] or value in self.noise:
            return
        rule = self.reading.rule(kind, value)
        if rule:
            self.noise[value] = rule
        else:
            self.values[kind][value] = None


def find_details(text: str, reading: Reading | None = None) -> Details:
    """The details of `text` (see the module docstring). `reading`, shared by the texts of one
    session, holds its working directory's `project_names` (noise, `replay.measures.noise`) and
    what its other texts showed: they share most tokens, and each is then read once."""
    text = _without_tool_lines(text)
    found = Details(reading=reading or Reading())
    found.secrets = find_secrets(text)
    _find_errors(found, text)
    for command in _commands(text):
        found.add("command", command)
    for number in counted_numbers(text):
        found.add("number", number)
    for kind, value in _token_details(dict.fromkeys(text.split()), found.reading.tokens):
        _dispatch(found, kind, value)
    return found


def _without_tool_lines(text: str) -> str:
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


def _token_details(tokens: Collection[str],
                   read: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """(kind, value) of every detail inside the distinct tokens, in the tokens' order. A token
    in `read` is not read again; single names are judged directly; the other tokens are joined,
    one string per set of kinds they can hold, and each string is read in one pass of that
    set's pattern. Every token read is added to `read`, with its pairs in order of sight."""
    routes: dict[int, tuple[list[str], list[int]]] = {}
    for token in tokens:
        if token in read:
            continue
        read[token] = known = []
        core = token.strip(_EDGES)
        if not core or core.isdigit() or (core.isalpha() and (
                core.islower() or core.istitle() or core.isupper())):
            continue  # a plain word or a bare count holds no detail
        quick = _single_name(token, core)
        if quick:
            known.append(("identifier", quick))
        elif quick is None:
            kinds = _kinds_for(token)
            if kinds not in routes:
                routes[kinds] = ([], [])
            pieces, starts = routes[kinds]
            starts.append(starts[-1] + len(pieces[-1]) + 1 if pieces else 0)
            pieces.append(token)
    for route, (pieces, starts) in routes.items():
        for match in _route_pattern(route).finditer("\n".join(pieces)):
            owner = pieces[bisect.bisect_right(starts, match.start()) - 1]
            read[owner].append((match.lastgroup or "", match.group()))
    return list(dict.fromkeys(itertools.chain.from_iterable(map(read.__getitem__, tokens))))


def _kinds_for(token: str) -> int:
    """The kinds a token can hold, as bits over `TOKEN_KINDS`: each kind's pattern needs what
    is tested here (a host a digit, brackets or a dot and a top-level domain; a path a slash
    or an extension; a version a digit and a dot; a hash or a number a digit)."""
    digit = _DIGIT.search(token) is not None
    dot = "." in token
    host = digit or "[" in token or "localhost" in token or (
        dot and _HOST_HINT.search(token) is not None)
    path = not ("*" in token and _GLOB.search(token)) and (  # `*_test.go` is a pattern
        "/" in token or (dot and _PATH_HINT.search(token) is not None))
    return (("://" in token) | ("::" in token) << 1 | host << 2 | path << 3
            | (digit and dot) << 4 | digit << 5 | digit << 6 | 1 << 7)


@functools.cache
def _route_pattern(route: int) -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<{name}>{pattern})"
                               for bit, (name, pattern) in enumerate(TOKEN_KINDS)
                               if route >> bit & 1))


def _single_name(token: str, core: str) -> str | None:
    """For a token that is one name: the identifier it is ("" for none); None for any other
    token (or a name that may be a hash), which the token patterns read."""
    if not core.isidentifier() or _HEX_WORD.fullmatch(core):
        return None
    if "_" in core or _CAMEL.search(core):
        return "" if core.strip("_") == "" or _ERROR_TYPE.fullmatch(core) else core
    if "(" in token and core not in _KEYWORDS and len(core) > 1 and f"{core}(" in token and (
            f"{core}(+)" not in token and f"{core}(-)" not in token):  # git's `3 insertions(+)`
        return core
    return ""


def _commands(text: str) -> list[str]:
    """The `$ command` lines of a text, found with `str.find`."""
    commands = []
    begin = 2 if text.startswith("$ ") else _after(text.find("\n$ "))
    while begin >= 0:
        end = text.find("\n", begin)
        commands.append(_cap(text[begin:len(text) if end < 0 else end].strip()))
        begin = _after(text.find("\n$ ", begin)) if end >= 0 else -1
    return commands


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


def _find_errors(found: Details, text: str) -> None:
    """Error types with the rest of their line, and pytest's `E   ` lines."""
    seen: set[str] = set()
    for match in _error_ends(text):
        before = text[max(match.start() - 120, 0):match.start()]
        line = before[before.rfind("\n") + 1:] + match.group()
        if line in seen:
            continue
        seen.add(line)
        start = match.start() - (len(before) - len(before.rstrip(_WORD_CHARS)))
        error = _ERROR_TYPE.fullmatch(text, start, match.end(1))
        if error is None:
            continue
        found.add("error_type", error.group())
        if match.group(2):
            found.add("error_message", _cap(f"{error.group()}: {match.group(2).rstrip()}"))
    start = 0 if text.startswith("E  ") else _line_start(text.find("\nE  "))
    while start >= 0:  # each line opening with `E  `, found with `str.find`
        match = _PYTEST_E.match(text, start)
        if match:
            found.add("error_message", _cap(match.group(1).rstrip()))
        start = _line_start(text.find("\nE  ", start))


def _line_start(newline: int) -> int:
    """Where a line starts after a newline found at `newline` (-1: none found)."""
    return newline + 1 if newline >= 0 else -1


def _error_ends(text: str) -> list[re.Match[str]]:
    """The matches of `_ERROR_END` that `finditer` gives, found faster: each ending word is
    found with `str.find`, and the pattern tried there, left to right, none inside another."""
    starts: list[int] = []
    for word in _ERROR_ENDS:
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


def _dispatch(found: Details, kind: str, value: str) -> None:
    if kind == "identifier":
        if _HOST_NAME.fullmatch(value):
            return  # `github.com`, `entire.io`: a host or module prefix, not a name in code
        if value not in _KEYWORDS and not ("." in value and _SHORT_PART.search(value)) and not (
                value.endswith(_ERROR_ENDS) and _ERROR_TYPE.fullmatch(value)):
            found.add("identifier", value)
    elif kind == "url":
        found.add("url", value.rstrip(TRAILING))  # its host is part of it, not a second detail
    elif kind == "path":
        _add_path(found, value.rstrip(TRAILING))
    elif kind == "test_id":
        found.add(kind, _balanced(value.rstrip(TRAILING.replace("]", ""))))
    else:
        found.add(kind, value)


def _balanced(value: str) -> str:
    """A test id without the `]` closing something outside it (`[id]`), keeping `test[1]`."""
    while value.endswith("]") and value.count("]") > value.count("["):
        value = value[:-1].rstrip(TRAILING.replace("]", ""))
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
    """The text one message adds: its content, then for each tool call a `$ command` line when
    it ran a shell command, and the strings of its arguments (decoded from JSON). Tool names are
    left out: they are the agent's vocabulary, not details of the task; so are the blocks the
    harness wraps in its own tags (`strip_harness`)."""
    parts = [strip_harness(message_text(message))]
    for call in tool_calls(message):
        arguments = parse_arguments(call_arguments(call))
        command = shell_command(arguments).split(" ⏎ ")[0]
        if command:
            parts.append(f"$ {command}")
        parts.extend(argument_strings(arguments))
    return "\n".join(part for part in parts if part)


def serialize(messages: Iterable[Message]) -> str:
    """The payloads of `messages`, one after another, separated by blank lines."""
    return "\n\n".join(message_payload(message) for message in messages)

