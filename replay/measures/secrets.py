"""Secrets in a text: API keys and tokens of known formats, private keys, and the value after a
key that names a secret (`password=`, `API_KEY:`). A compactor is right to redact them, so a
retention reference never holds one (`replay.measures.details` sets them apart).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TRAILING = ".,;:!?'\")]}"  # punctuation that ends a sentence, not a value
_SECRET = re.compile(
    r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{20,}"
    r"|AKIA[0-9A-Z]{16}|xox[abposr]-[\w-]{10,}|AIza[\w-]{30,}|Bearer ([\w.~+/-]{16,}=*)"
    r"|eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
# The value after a key that names a secret (not a code expression or a shell variable).
_KEYED = re.compile(
    r"(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"([^\s\"',;(){}$<>]{8,})", re.IGNORECASE
)
# The prefixes of secrets that lie inside one whitespace-separated token, then those of the two
# that span tokens (a space follows the word).
_TOKEN_PREFIXES = ("sk-", "gh", "github_pat_", "AKIA", "xox", "AIza", "eyJ")
_SPANNING_PREFIXES = ("Bearer ", "-----BEGIN ")
_SECRET_KEYS = (b"password", b"passwd", b"secret", b"token", b"api", b"access")


def find_secrets(text: str, tokens: str | None = None) -> set[str]:
    """Tokens of known formats, and the value after a key that names a secret: each prefix and
    key word (in any case) is found with `str.find`, then its pattern is tried. `tokens`, the
    text's distinct whitespace-separated tokens joined by newlines (default: the text, which
    holds them), is where a secret inside one token is found, the same set in a shorter text,
    and where the words of the others are looked for first: a text without them is not read."""
    within = text if tokens is None else tokens
    found = _prefixed(within, _TOKEN_PREFIXES)
    found |= _prefixed(text, [prefix for prefix in _SPANNING_PREFIXES
                              if tokens is None or prefix.rstrip() in tokens])
    # One character a byte (`?` for any other than ASCII): positions stay; key words in any case
    lowered = _lowered(within)
    words = [word for word in _SECRET_KEYS if word in lowered]
    if words and tokens is not None:
        lowered = _lowered(text)
    for word in words:
        start = lowered.find(word)
        while start >= 0:
            window = text[start:start + 28]
            match = _KEYED.match(text, start) if "=" in window or ":" in window else None
            if match:
                found.add(match.group(1).rstrip(TRAILING))
            start = lowered.find(word, start + 1)
    return found


def _prefixed(text: str, prefixes: Iterable[str]) -> set[str]:
    """The secrets of known formats that start where one of `prefixes` occurs in `text`."""
    found: set[str] = set()
    for prefix in prefixes:
        start = text.find(prefix)
        while start >= 0:
            match = _SECRET.match(text, start)
            if match:
                found.add(match.group(1) or match.group())
            start = text.find(prefix, start + 1)
    return found


def _lowered(text: str) -> bytes:
    """`text` as ASCII bytes in lower case, `?` for any other character: positions stay."""
    return text.encode("ascii", "replace").lower()
