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
commands, numbers with a unit word, secrets after their key) is found on the whole text
(`replay.measures.lines`, `replay.measures.secrets`); the rest is found on the distinct
whitespace-separated tokens, which is the same answer for values without whitespace, read once
each, and what a token's matches stand for is judged once per session (`Reading`).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from replay.compaction.anchors import (
    EXTENSIONS,
    PATH_PATTERN,
    TEST_ID_PATTERN,
    URL_PATTERN,
    argument_strings,
    parse_arguments,
    shell_command,
)
from replay.compaction.transcript import call_arguments, message_text, tool_calls
from replay.measures.lines import (
    ERROR_ENDS,
    ERROR_TYPE_PATTERN,
    UNITS,
    commands,
    counted_numbers,
    errors,
    without_tool_lines,
)
from replay.measures.noise import noise_rule, strip_harness
from replay.measures.secrets import TRAILING, find_secrets
from replay.models.types import Message

KINDS = ("path", "test_id", "url", "host", "error_type", "error_message", "command", "version",
         "hash", "number", "identifier")
TITLES = {"path": "paths", "test_id": "test ids", "url": "URLs", "host": "hosts and ports",
          "error_type": "error types", "error_message": "error messages", "command": "commands",
          "version": "versions", "hash": "hashes", "number": "numbers with units",
          "identifier": "identifiers"}
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
# A dotted name, snake_case, _private, camelCase, PascalCase, an ACRONYMWord, a called `name(`.
# Every repeat is possessive (`*+`, `++`): none gives back a character the next element could use
# (`[^\W_]*+_` runs to the first underscore where `\w*_` backtracked from the word's end to the
# last; both then match to the word's end), so the matches are the backtracking pattern's, found
# without trying every shorter run at each word.
_IDENTIFIER = (
    r"(?<![\w.\\])(?!(?<=\*)_)(?:[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)+|[A-Za-z][^\W_]*+_\w*+"
    r"|_++[A-Za-z]\w*+|[a-z][^\WA-Z]*+[A-Z]\w*+|[A-Z]++[a-z][^\WA-Z]*+[A-Z]\w*+|[A-Z]{2,}+[a-z]\w*+"
    r"|[A-Za-z]\w*+(?=\((?![-+]\))))"
)
# Tried on each distinct whitespace-separated token that is not a plain word, in this order;
# a token is only tried with the kinds it can hold (`_kinds_for`), which gives the same matches.
TOKEN_KINDS = (
    ("url", URL_PATTERN.pattern), ("test_id", TEST_ID_PATTERN.pattern), ("host", _HOST),
    # not the `/tag` of a closing `</tag>`, nor a called name (`response.json()`, `console.log(`)
    ("path", rf"(?<!<)(?:{PATH_PATTERN.pattern})(?![\w.@+-]*\()"),
    ("version", _VERSION), ("hash", _HASH),
    ("number", rf"(?<![\w.])\d+(?:\.\d+)?(?:%(?!\])|{UNITS})"),  # not pytest's `[ 42%]`
    ("identifier", _IDENTIFIER))
_KEYWORDS = frozenset({"if", "for", "while", "return", "and", "or", "not", "in", "is", "print",
                       "with", "elif", "else", "lambda", "yield", "assert", "raise", "import",
                       "from", "as", "function", "new", "typeof", "switch", "catch", "def"})
_EDGES = ".,;:!?'\"`()[]{}<>"
_HEX_WORD = re.compile(r"[0-9a-f]{7,64}")
_DIGIT = re.compile(r"\d")
_HOST_HINT = re.compile(r"\.(?:com|org|net|io|dev|ai|app|cloud|local|internal|edu|gov|co)\b")
_PATH_HINT = re.compile(rf"\.(?<=\w\.)(?:{EXTENSIONS})(?!\w)")  # the dot first: scanned for
_SHORT_PART = re.compile(r"(?:^|\.)\w(?:\.|$)")  # `e.g`: a one-letter part is no name
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_HOST_NAME = re.compile(_HOST)
_GLOB = re.compile(r"\*[/._-]|/\*")  # a glob's star, not markdown's `**bold**`
_NAMES_ONLY = 1 << len(TOKEN_KINDS) - 1  # the route of a token that can hold identifiers only


@dataclass
class Reading:
    """What the texts of one session have shown so far, so that a token or a value met in
    several of them is judged once: each token's (kind, match) pairs, the detail each pair
    stands for, and each value's noise rule (`noise_rule`, with `project`, the working
    directory's `project_names`)."""

    project: frozenset[str] = frozenset()
    imported: frozenset[str] = frozenset()
    tokens: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    rules: dict[tuple[str, str], str | None] = field(default_factory=dict)
    details: dict[tuple[str, str], tuple[str, str] | None] = field(default_factory=dict)

    def detail(self, pair: tuple[str, str]) -> tuple[str, str] | None:
        """The detail a token pattern's (kind, match) stands for (`_detail`)."""
        if pair not in self.details:
            self.details[pair] = _detail(*pair)
        return self.details[pair]

    def rule(self, kind: str, value: str) -> str | None:
        """The noise rule `value`, found as `kind`, breaks (None: a detail)."""
        key = (kind, value)
        if key not in self.rules:
            self.rules[key] = noise_rule(kind, value, self.project, self.imported)
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
    text = without_tool_lines(text)
    tokens = dict.fromkeys(text.split())
    joined = "\n".join(tokens)  # where the words of whole-text passes are looked for first
    found = Details(reading=reading or Reading())
    found.secrets = find_secrets(text, joined)
    for kind, value in errors(text, joined):
        found.add(kind, value)
    for command in commands(text):
        found.add("command", command)
    for number in counted_numbers(text):
        found.add("number", number)
    for pair in _token_details(tokens, found.reading.tokens):
        detail = found.reading.detail(pair)
        if detail:
            found.add(*detail)
    return found


def _token_details(tokens: Collection[str],
                   read: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """(kind, value) of every detail inside the distinct tokens, in the tokens' order. A token
    in `read` is not read again; single names are judged directly; the other tokens are joined,
    one string per set of kinds they can hold, and each string is read in one pass of that
    set's pattern, except the tokens that can hold identifiers only: no match spans a newline,
    so `findall` on each of them gives the same pairs without finding each match's token.
    Every token read is added to `read`, with its pairs in order of sight."""
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
        if route == _NAMES_ONLY:  # one kind, no match across tokens: each read on its own
            names = _route_pattern(route).findall
            for piece in pieces:
                read[piece].extend([("identifier", name) for name in names(piece)])
            continue
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
        return "" if core.strip("_") == "" or ERROR_TYPE_PATTERN.fullmatch(core) else core
    if "(" in token and core not in _KEYWORDS and len(core) > 1 and f"{core}(" in token and (
            f"{core}(+)" not in token and f"{core}(-)" not in token):  # git's `3 insertions(+)`
        return core
    return ""


def _detail(kind: str, value: str) -> tuple[str, str] | None:
    """The detail a pattern's match stands for (None: none): a name that is a host, a keyword,
    a dotted name with a one-letter part or an error type is no identifier; URLs, paths and
    test ids lose the punctuation that ends a sentence, and a path the `-LINE-` grep's context
    lines add to it."""
    if kind == "identifier":
        if ("." in value or "localhost" in value) and _HOST_NAME.fullmatch(value):
            return None  # `github.com`, `entire.io`: a host or module prefix, not a name in code
        if value in _KEYWORDS or ("." in value and _SHORT_PART.search(value)) or (
                value.endswith(ERROR_ENDS) and ERROR_TYPE_PATTERN.fullmatch(value)):
            return None
        return kind, value
    if kind == "url":
        return kind, value.rstrip(TRAILING)  # its host is part of it, not a second detail
    if kind == "path":
        value = _GREP_CONTEXT.sub(r"\1", value.rstrip(TRAILING))
        return (kind, value) if _is_path(value) else None
    if kind == "test_id":
        return kind, _balanced(value.rstrip(TRAILING.replace("]", "")))
    return kind, value


# grep's context lines (`-A`, `-B`, `-C`) glue `-LINE-` to the file's name: `strategy.go-103-`
_GREP_CONTEXT = re.compile(r"(\.[A-Za-z0-9]{1,10})-\d+-/?$")


def _balanced(value: str) -> str:
    """A test id without the `]` closing something outside it (`[id]`), keeping `test[1]`."""
    while value.endswith("]") and value.count("]") > value.count("["):
        value = value[:-1].rstrip(TRAILING.replace("]", ""))
    return value


def _is_path(value: str) -> bool:
    """A path has a letter and is rooted, relative or has an extension (not `and/or`)."""
    if not any(char.isalpha() for char in value) or not value.strip("/"):
        return False
    return value.startswith(("/", "~", "./", "../")) or value.count("/") >= 2 or "." in value


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

