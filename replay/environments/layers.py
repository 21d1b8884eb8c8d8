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
layer's files: it sees the tree only through the sandbox (`changed` is for tests). The next
fresh layer's holder is made in the background while the layer is in use (`Spare`), in
namespaces of its own, so that `fresh()` need not wait for it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
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
        self.spare: Spare | None = None

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
        key = (build, tuple(unroutable), tuple(groups))

        def make() -> Holder:
            return hold(self.folder, self.size, self.overlays(build), unroutable, groups)

        old, self.holder = self.holder, None
        try:  # the new holder first: the slot's control groups always have one to remove them
            spare, self.spare = self.spare, None
            self.holder = (spare.take(key) if spare is not None else None) or make()
        finally:
            if old is not None:
                old.kill()
        self.spare = Spare(key, make)
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
        """Discard the layer: its holder ends, and the cell's namespaces and mounts with it
        (and the spare's)."""
        old, self.holder = self.holder, None
        spare, self.spare = self.spare, None
        if spare is not None:
            spare.discard()
        if old is not None:
            old.kill()


class Spare:
    """The holder of a layer's next fresh state, made in the background while the layer is in
    use, so that `fresh` finds it ready: an unused holder with an empty layer, exactly what
    `fresh` would make then (`key`: what it was made for). One that could not be made is made
    again by `fresh`, which then says why if it fails."""

    def __init__(self, key: tuple[object, ...], make: Callable[[], Holder]) -> None:
        self.key = key
        self.holder: Holder | None = None
        self.thread = threading.Thread(target=self._make, args=(make,), daemon=True,
                                       name="replay-spare-layer")
        self.thread.start()

    def _make(self, make: Callable[[], Holder]) -> None:
        try:
            self.holder = make()
        except Exception:  # made again, and reported, by `fresh`
            self.holder = None

    def take(self, key: tuple[object, ...]) -> Holder | None:
        """The spare holder if it was made for `key` and still runs; else None (it ends)."""
        self.thread.join()
        if key == self.key and self.holder is not None and self.holder.alive:
            return self.holder
        self.discard()
        return None

    def discard(self) -> None:
        """End the spare holder (once it is made)."""
        self.thread.join()
        if self.holder is not None:
            self.holder.kill()
            self.holder = None
