"""The layer a cell writes: the validated build stays read-only under every command.

A local slot's tree and venv are overlays (see sandbox.Overlay): the lower folders are the build
(the instance's tree at the base commit, `.git/` and ignored files included, and its venv, as
validated), the upper folders live on the slot's cell layer, a tmpfs of bounded size at
`<slot>/cell`. The layer and its overlays are mounted once per fresh layer by its holder
(holders.py), in the cell's own mount namespace, which every command of the cell enters; the
host never sees them. What a command writes lands in the layer. `fresh()` starts a new holder
with an empty layer and ends the old one (and with it the old layer and namespaces), so the
next command sees exactly the build again, whatever the last cell did to the tree, `.git/`
(hooks, info/exclude), ignored files (`__pycache__`) or the venv (a `.pth`, sitecustomize.py),
and a cell that fills its layer fills only its own bounded tmpfs. The engine never reads the
layer's files: it sees the tree only through the sandbox (`changed` is for tests).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from replay.environments.holders import Holder, hold
from replay.environments.sandbox import Overlay

PARTS = ("tree", "venv")


class CellLayer:
    """A slot's cell layer at `folder`, `size` bytes at most (see the module docstring)."""

    def __init__(self, folder: Path, size: int) -> None:
        self.folder = folder
        self.size = size
        self.holder: Holder | None = None

    @property
    def live(self) -> bool:
        """Whether the layer is mounted (its holder runs)."""
        return self.holder is not None and self.holder.alive

    def fresh(self, build: Path, unroutable: Sequence[str], groups: Sequence[Path] = ()) -> int:
        """Replace the layer by an empty one, and the cell's namespaces by new ones in which the
        overlays over `build`'s tree and venv are mounted (`unroutable`, `groups`: see
        holders.hold): the next command sees the build as it was built. Returns the PID of the
        new holder, whose namespaces the cell's commands enter."""
        self.folder.mkdir(parents=True, exist_ok=True)
        old, self.holder = self.holder, None
        try:  # the new holder first: the slot's control groups always have one to remove them
            self.holder = hold(self.folder, self.size, self.overlays(build), unroutable, groups)
        finally:
            if old is not None:
                old.kill()
        return self.holder.pid

    def overlays(self, build: Path) -> list[Overlay]:
        """The overlays of the tree and the venv over `build`'s own."""
        return [Overlay(build / part, self.folder / part / "upper", self.folder / part / "work",
                        self.folder / part / "merged") for part in PARTS]

    def merged(self, part: str) -> Path:
        """Where `part`'s overlay is mounted in the cell's mount namespace."""
        return self.folder / part / "merged"

    def changed(self) -> list[str]:
        """What the layer holds (empty right after `fresh`): the names under each upper folder."""
        if self.holder is None:
            raise FileNotFoundError(f"{self.folder} is not mounted")
        return sorted(f"{part}/{name}" for part in PARTS
                      for name in os.listdir(self.holder.seen(self.folder / part / "upper")))

    def close(self) -> None:
        """Discard the layer: its holder ends, and the cell's namespaces and mounts with it."""
        old, self.holder = self.holder, None
        if old is not None:
            old.kill()
