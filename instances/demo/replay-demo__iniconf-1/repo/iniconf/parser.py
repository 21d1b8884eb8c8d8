"""Turn INI text into {section: {option: raw value}}."""

from __future__ import annotations

import re

from iniconf.errors import ParseError

DEFAULT_SECTION = "DEFAULT"

_SECTION = re.compile(r"^\[(?P<name>[^\]]+)\]\s*$")
_OPTION = re.compile(r"^(?P<key>[^=:\s][^=:]*?)\s*[=:]\s*(?P<value>.*)$")


def normalize_key(name: str) -> str:
    """The stored form of an option name: case-insensitive, '-' and '_' alike."""
    return name.strip().lower().replace("-", "_")


def normalize_section(name: str) -> str:
    """Section names keep their case, except DEFAULT, which is matched in any case."""
    name = name.strip()
    return DEFAULT_SECTION if name.upper() == DEFAULT_SECTION else name


def parse(text: str) -> dict[str, dict[str, str]]:
    """Parse INI text. Values are raw strings: no interpolation, no type conversion."""
    sections: dict[str, dict[str, str]] = {DEFAULT_SECTION: {}}
    current: dict[str, str] | None = None
    last_key: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if line[0].isspace() and current is not None and last_key is not None:
            current[last_key] = f"{current[last_key]}\n{stripped}".strip()
            continue
        header = _SECTION.match(stripped)
        if header:
            name = normalize_section(header["name"])
            current = sections.setdefault(name, {})
            last_key = None
            continue
        option = _OPTION.match(stripped)
        if option is None:
            raise ParseError("expected 'key = value'", lineno, line)
        if current is None:
            raise ParseError("option outside of any section", lineno, line)
        last_key = normalize_key(option["key"])
        current[last_key] = option["value"].strip()
    return sections
