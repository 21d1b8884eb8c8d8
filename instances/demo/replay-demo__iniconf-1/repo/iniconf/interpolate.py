"""Expansion of ${option} and ${section:option} references in values."""

from __future__ import annotations

import re

from iniconf.errors import InterpolationError
from iniconf.parser import DEFAULT_SECTION, normalize_section

MAX_DEPTH = 10

_REFERENCE = re.compile(r"\$(?:\$|\{(?:(?P<section>[^}:]+):)?(?P<option>[^}]+)\})")


def _raw(sections: dict[str, dict[str, str]], section: str, option: str) -> str:
    """The raw value of `option` in `section`, falling back to DEFAULT."""
    values = sections.get(section)
    if values is None:
        raise InterpolationError(f"no section {section!r}")
    if option in values:
        return values[option]
    if option in sections[DEFAULT_SECTION]:
        return sections[DEFAULT_SECTION][option]
    known = sorted({*values, *sections[DEFAULT_SECTION]})
    raise InterpolationError(
        f"no option {option!r} in section {section!r} (options: {', '.join(known)})"
    )


def expand(value: str, section: str, sections: dict[str, dict[str, str]], depth: int = 0) -> str:
    """Expand the references in `value`, read from `section`; `$$` gives a literal `$`."""
    if depth > MAX_DEPTH:
        raise InterpolationError(f"references nested deeper than {MAX_DEPTH} levels: {value!r}")

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        target = normalize_section(match["section"]) if match["section"] else section
        option = match["option"].strip()
        return expand(_raw(sections, target, option), target, sections, depth + 1)

    return _REFERENCE.sub(replace, value)
