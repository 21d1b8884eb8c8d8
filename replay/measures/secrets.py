"""Secrets in a text: API keys and tokens of known formats, private keys, and the value after a
key that names a secret (`password=`, `API_KEY:`). A compactor is right to redact them, so a
retention reference never holds one (`replay.measures.details` sets them apart).
"""

from __future__ import annotations

import re

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
_SECRET_PREFIXES = ("sk-", "gh", "github_pat_", "AKIA", "xox", "AIza", "Bearer ", "eyJ",
                    "-----BEGIN ")
_SECRET_KEYS = (b"password", b"passwd", b"secret", b"token", b"api", b"access")


def find_secrets(text: str) -> set[str]:
    """Tokens of known formats, and the value after a key that names a secret: each prefix and
    key word (in any case) is found with `str.find`, then its pattern is tried."""
    found: set[str] = set()
    for prefix in _SECRET_PREFIXES:
        start = text.find(prefix)
        while start >= 0:
            match = _SECRET.match(text, start)
            if match:
                found.add(match.group(1) or match.group())
            start = text.find(prefix, start + 1)
    # One character a byte (`?` for any other than ASCII): positions stay; key words in any case
    lowered = text.encode("ascii", "replace").lower()
    for word in _SECRET_KEYS:
        start = lowered.find(word)
        while start >= 0:
            window = text[start:start + 28]
            match = _KEYED.match(text, start) if "=" in window or ":" in window else None
            if match:
                found.add(match.group(1).rstrip(TRAILING))
            start = lowered.find(word, start + 1)
    return found
