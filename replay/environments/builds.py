"""A local build on disk: its key, its ready record with the layout it was written in, and the
system packages its recipe names that this machine lacks."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

from replay.core.digest import sha256_hex
from replay.environments.recipes import Recipe
from replay.instances.records import Instance

log = logging.getLogger(__name__)

READY = "ready.json"
# The layout of a build, recorded in its READY file: a build written by an older layout (one
# without this number, from before the cell's tree, .git, ignored files and venv were reset
# per cell) is built again, never restored from (its trees do not match their fingerprints);
# format 3 builds hold the venv's bytecode (local.BYTECODE_STEP).
BUILD_FORMAT = 3


def build_key(instance: Instance, recipe: Recipe) -> str:
    """What a build depends on: the recipe and the base commit (a suite may move an instance's
    base commit; the tree built for the old one must not be reused)."""
    return sha256_hex(f"{recipe.digest()}:{instance.base_commit}")[:12]


def current(built: Path) -> bool:
    """Whether `built` is a finished build of today's layout (an older one is built again)."""
    ready = built / READY
    if not ready.is_file():
        return False
    if json.loads(ready.read_text()).get("format") == BUILD_FORMAT:
        return True
    log.warning("%s was built by an older replay (build format other than %d): building it "
                "again", built.name, BUILD_FORMAT)
    return False


def missing_system_packages(packages: list[str]) -> list[str]:
    """The Debian packages of `packages` not installed here (all of them without dpkg)."""
    missing = []
    for package in packages:
        try:
            done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                                  capture_output=True, text=True, timeout=30)
        except OSError:
            return list(packages)
        if "install ok installed" not in done.stdout:
            missing.append(package)
    return missing
