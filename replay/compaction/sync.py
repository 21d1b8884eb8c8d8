"""Sync one production prompt: download its pinned package, cut the text, check it, cache it."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import httpx

from replay.compaction.cutting import cut_package
from replay.compaction.registry_fetch import (
    NPM_REGISTRY,
    PYPI_INDEX,
    TIMEOUT,
    PackageFile,
    download,
    npm_package_file,
    pypi_wheel_file,
)
from replay.compaction.sources import PromptSource, PromptText, save_prompt, text_sha256
from replay.core.errors import InputError


class PromptTextMismatch(InputError):
    """A cut text is not the pinned one: the package changed or the cut rule is wrong."""


def package_file(
    client: httpx.Client,
    source: PromptSource,
    npm_registry: str = NPM_REGISTRY,
    pypi_index: str = PYPI_INDEX,
) -> PackageFile:
    """The registry's file for a source's pinned package."""
    if source.registry == "npm":
        return npm_package_file(client, source.package, source.version, npm_registry)
    assert source.python is not None  # PromptSource requires it for pypi
    return pypi_wheel_file(
        client, source.package, source.version, source.python, source.digest, pypi_index
    )


def check_texts(source: PromptSource, texts: dict[str, str]) -> None:
    """Raise PromptTextMismatch unless every part's text has its pinned sha256."""
    for part in source.parts:
        text = texts[part.role]
        actual = text_sha256(text)
        if actual != part.sha256:
            raise PromptTextMismatch(
                f"{source.name} ({part.role}) from {source.spec}: expected sha256 {part.sha256} "
                f"({part.chars} chars), got {actual} ({len(text)} chars)"
            )


def sync_prompt(
    client: httpx.Client,
    source: PromptSource,
    npm_registry: str = NPM_REGISTRY,
    pypi_index: str = PYPI_INDEX,
) -> PromptText:
    """Download, check and cut `source`'s package; cache and return its checked text."""
    file = package_file(client, source, npm_registry, pypi_index)
    with tempfile.TemporaryDirectory(prefix="replay-prompt-") as tmp:
        archive = Path(tmp) / "package"
        download(client, file, archive, source.digest)
        texts = cut_package(archive, source)
    check_texts(source, texts)
    prompt = PromptText(
        name=source.name,
        agent=source.agent,
        registry=source.registry,
        package=source.package,
        version=source.version,
        digest=source.digest,
        parts={part.role: texts[part.role] for part in source.parts},
        synced_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    save_prompt(prompt)
    return prompt


def registry_client() -> httpx.Client:
    """An HTTP client for registries: redirects followed, timeouts that suit big packages."""
    return httpx.Client(timeout=TIMEOUT, follow_redirects=True)
