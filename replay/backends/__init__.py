"""Environments: where an instance's repository lives and its commands run.

Backends are chosen by name; each is imported only when chosen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replay.errors import InputError

BACKENDS = ("local",)


def make_backend(name: str, mirrors: Path | None = None, **options: Any) -> Any:
    """The backend called `name` (see BACKENDS); an unknown name is bad input."""
    if name == "local":
        from replay.backends.local import LocalBackend

        return LocalBackend(mirrors=mirrors, **options)
    raise InputError(f"unknown backend {name!r}: use one of {', '.join(BACKENDS)}")
