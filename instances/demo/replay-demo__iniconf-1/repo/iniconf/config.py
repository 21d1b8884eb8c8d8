"""The Config object: typed, interpolated access to parsed INI data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iniconf.errors import NoOptionError
from iniconf.interpolate import expand
from iniconf.parser import DEFAULT_SECTION, normalize_key, normalize_section, parse

BOOLEANS = {
    "1": True, "yes": True, "true": True, "on": True,
    "0": False, "no": False, "false": False, "off": False,
}

_MISSING: Any = object()


class Config:
    """Parsed INI data. Options are read with get() and the typed getters."""

    def __init__(self, sections: dict[str, dict[str, str]]) -> None:
        self._sections = sections

    def sections(self) -> list[str]:
        """Section names in file order, without DEFAULT."""
        return [name for name in self._sections if name != DEFAULT_SECTION]

    def options(self, section: str) -> list[str]:
        """Option names of `section`, including those inherited from DEFAULT."""
        values = self._section(section)
        return list(dict.fromkeys([*values, *self._sections[DEFAULT_SECTION]]))

    def has_option(self, section: str, option: str) -> bool:
        return normalize_key(option) in self.options(section)

    def get(self, section: str, option: str, fallback: Any = _MISSING, raw: bool = False) -> Any:
        """The value of `option` in `section` (or DEFAULT), references expanded unless `raw`."""
        name = normalize_section(section)
        values = self._section(name)
        key = normalize_key(option)
        if key in values:
            value = values[key]
        elif key in self._sections[DEFAULT_SECTION]:
            value = self._sections[DEFAULT_SECTION][key]
        elif fallback is not _MISSING:
            return fallback
        else:
            raise NoOptionError(f"no option {option!r} in section {section!r}")
        return value if raw else expand(value, name, self._sections)

    def getint(self, section: str, option: str, fallback: Any = _MISSING) -> Any:
        value = self.get(section, option, fallback)
        return value if value is fallback else int(value)

    def getfloat(self, section: str, option: str, fallback: Any = _MISSING) -> Any:
        value = self.get(section, option, fallback)
        return value if value is fallback else float(value)

    def getbool(self, section: str, option: str, fallback: Any = _MISSING) -> Any:
        value = self.get(section, option, fallback)
        if value is fallback:
            return value
        try:
            return BOOLEANS[value.strip().lower()]
        except KeyError:
            raise ValueError(f"not a boolean: {value!r} ({section}.{option})") from None

    def getlist(self, section: str, option: str, fallback: Any = _MISSING) -> Any:
        """A comma- or newline-separated value as a list of non-empty items."""
        value = self.get(section, option, fallback)
        if value is fallback:
            return value
        items = value.replace("\n", ",").split(",")
        return [item.strip() for item in items if item.strip()]

    def _section(self, section: str) -> dict[str, str]:
        try:
            return self._sections[normalize_section(section)]
        except KeyError:
            raise NoOptionError(f"no section {section!r}") from None


def loads(text: str) -> Config:
    """A Config from INI text."""
    return Config(parse(text))


def load(path: str | Path) -> Config:
    """A Config from an INI file (UTF-8)."""
    return loads(Path(path).read_text(encoding="utf-8"))
