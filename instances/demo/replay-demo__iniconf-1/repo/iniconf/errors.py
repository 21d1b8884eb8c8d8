"""Errors raised while reading or querying a configuration."""


class ConfigError(Exception):
    """Base class of every iniconf error."""


class ParseError(ConfigError):
    """A line that is not a section header, an option, a comment or a continuation."""

    def __init__(self, message: str, lineno: int, line: str) -> None:
        super().__init__(f"line {lineno}: {message}: {line!r}")
        self.lineno = lineno
        self.line = line


class NoOptionError(ConfigError, KeyError):
    """An option (or section) that the configuration does not have."""

    def __str__(self) -> str:
        return str(self.args[0])


class InterpolationError(ConfigError):
    """A ${...} reference that cannot be expanded."""
