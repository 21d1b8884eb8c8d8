"""Redaction of secrets and personal data in collected transcripts, before anything is written.

What it catches (each replaced by a placeholder naming its kind and a number, the same value
getting the same placeholder throughout a session, so a value a summary keeps still matches the
later messages that name it):

- secrets: API keys and tokens of known formats (OpenAI, Anthropic, GitHub, AWS, Slack, Google,
  JWTs, bearer tokens), private-key blocks' opening, and the value after a key that names a
  secret (`password=`, `API_KEY:`) when it mixes letters and digits over 12 characters or more,
  as `replay.measures.secrets` finds them (code such as `token: user.token` is kept);
- e-mail addresses;
- private IPv4 addresses (10/8, 172.16/12, 192.168/16; loopback and public ones are kept).

What it misses: secrets of formats it does not know and not after a telling key, keyed
secrets of letters only or shorter than 12 characters, names of
people, home-folder user names in paths (`/Users/alex/...` is kept: paths are details retention
scores), public IP addresses.

A replaced value that retention would score as a detail (a private IP is a host; a token may be
an identifier) changes what is scored: such replacements are counted apart (`scored`), so the
change is reported, never silent.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from replay.measures.details import find_details
from replay.measures.secrets import find_secrets

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*"
                    r"\.[A-Za-z]{2,}\b")
_PRIVATE_IP = re.compile(
    r"(?<![\d.])(?:10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])"
    r"(?:\.\d{1,3}){2})(?![\d.]*\d)")
_MAYBE = re.compile(r"10\.|192\.168|172\.|sk-|gh[pousr]_|github_pat|AKIA|xox|AIza|Bearer|eyJ"
                    r"|-----BEGIN"
                    r"|(?i:password|passwd|secret|token|api[_-]?key|access[_-]?key)")
_KNOWN_PREFIXES = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "xox",
                   "AIza", "eyJ", "-----BEGIN")
_NOT_EMAIL_HOSTS = ("users.noreply.github.com",)  # GitHub's own no-reply addresses are public


def _secret_like(value: str) -> bool:
    """A value of a known token format, or one after a secret's key that mixes letters and
    digits over at least 12 characters (`password: user.password` in code is not a secret)."""
    if value.startswith(_KNOWN_PREFIXES):
        return True
    return (len(value) >= 12 and any(c.isdigit() for c in value)
            and any(c.isalpha() for c in value))


@dataclass
class Redactor:
    """Replaces secrets, e-mail addresses and private IPs in one session's lines."""

    placeholders: dict[str, str] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)  # replacements by kind
    scored: Counter[str] = field(default_factory=Counter)  # of which were scored details

    def value(self, value: Any) -> Any:
        """A JSON value with every string in it redacted (keys are kept)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        return value

    def text(self, text: str) -> str:
        """The text with every value it catches replaced (see the module docstring)."""
        if "@" not in text and not _MAYBE.search(text):
            return text
        found = [(value, "secret") for value in find_secrets(text) if _secret_like(value)]
        found += [(m.group(), "email") for m in _EMAIL.finditer(text)
                  if not m.group().endswith(_NOT_EMAIL_HOSTS)]
        found += [(m.group(), "private-ip") for m in _PRIVATE_IP.finditer(text)]
        for value, kind in sorted(found, key=lambda pair: -len(pair[0])):
            if value not in text:
                continue
            occurrences = text.count(value)
            text = text.replace(value, self._placeholder(value, kind))
            self.counts[kind] += occurrences
            if self._is_detail(value):
                self.scored[kind] += occurrences
        return text

    def _placeholder(self, value: str, kind: str) -> str:
        if value not in self.placeholders:
            number = sum(1 for name in self.placeholders.values() if name.startswith(f"<{kind}-"))
            self.placeholders[value] = f"<{kind}-{number + 1}-redacted>"
        return self.placeholders[value]

    @staticmethod
    def _is_detail(value: str) -> bool:
        details = find_details(value)
        return any(value in found
                   for values in details.values.values() for found in values)
