"""A small INI reader with typed getters and ${section:option} interpolation."""

from iniconf.config import Config, load, loads
from iniconf.errors import ConfigError, InterpolationError, NoOptionError, ParseError

__all__ = [
    "Config",
    "ConfigError",
    "InterpolationError",
    "NoOptionError",
    "ParseError",
    "load",
    "loads",
]
__version__ = "0.6.0"
