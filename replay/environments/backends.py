"""Environments: where an instance's repository lives and its commands run.

Backends are chosen by name; each is imported only when chosen.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from replay.core.errors import InputError

BACKENDS = ("local", "docker")


def make_backend(name: str, mirrors: Path | None = None, base_image: str | None = None,
                 **options: Any) -> Any:
    """The backend called `name` (see BACKENDS); an unknown name is bad input.

    `base_image` (docker only) is the image environments are built on.
    """
    if name == "local":
        if base_image is not None:
            raise InputError("--base-image applies to --backend docker only")
        from replay.environments.local import LocalBackend

        return LocalBackend(mirrors=mirrors, **options)
    if name == "docker":
        from replay.environments.docker import DockerBackend

        if base_image is not None:
            options["base_image"] = base_image
        return DockerBackend(mirrors=mirrors, **options)
    raise InputError(f"unknown backend {name!r}: use one of {', '.join(BACKENDS)}")


@contextmanager
def open_backend(name: str, mirrors: Path | None = None, base_image: str | None = None,
                 **options: Any) -> Iterator[Any]:
    """`make_backend`, closed on the way out (normal exit, error or Ctrl-C) when it can be."""
    backend = make_backend(name, mirrors, base_image, **options)
    try:
        yield backend
    finally:
        close_backend(backend)


def close_backend(backend: Any) -> None:
    """Release what a backend holds (local slot leases, the docker backend's containers)."""
    backend.close()
