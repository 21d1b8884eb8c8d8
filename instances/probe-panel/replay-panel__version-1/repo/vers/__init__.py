"""Version of the vers package."""

__version__ = "4.1.0"
