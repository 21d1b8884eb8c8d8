"""The layer a cell writes: the validated build stays read-only under every command.

A local slot's tree and venv are overlays (see sandbox.Overlay): the lower folders are the build
(the instance's tree at the base commit, `.git/` and ignored files included, and its venv, as
validated), the upper folders live on the slot's cell layer, a tmpfs of bounded size mounted by
the engine at `<slot>/cell`. The overlays are mounted once per fresh layer, in the cell's own
mount namespace (sandbox.make_namespaces, kept by files in `<slot>/cell/ns`), which every command
of the cell enters; what a command writes lands in the layer. `fresh()` unmounts the layer (and
with it the files that keep the cell's namespaces), mounts an empty one and makes the cell's new
namespaces (which detach the other slots' layers), so the next command sees exactly the build
again, whatever the last cell did to the tree, `.git/`
(hooks, info/exclude), ignored files (`__pycache__`) or the venv (a `.pth`, sitecustomize.py),
and a cell that fills its layer fills only its own bounded tmpfs. The engine never reads the
layer's files: it sees the tree only through the sandbox.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from replay.core.errors import EnvironmentFault
from replay.core.paths import home
from replay.environments.leases import lease_file, try_lease
from replay.environments.sandbox import Namespaces, Overlay, make_namespaces

PARTS = ("tree", "venv")
SOURCE = "replay-cell"  # the source name of every cell layer's tmpfs (see /proc/self/mountinfo)


class CellLayer:
    """A slot's cell layer at `folder`, `size` bytes at most (see the module docstring)."""

    def __init__(self, folder: Path, size: int) -> None:
        self.folder = folder
        self.size = size

    @property
    def mounted(self) -> bool:
        return os.path.ismount(self.folder)

    def fresh(self, build: Path, unroutable: Sequence[str]) -> Namespaces:
        """Replace the layer by an empty one, and the cell's namespaces by new ones in which the
        overlays over `build`'s tree and venv are mounted (`unroutable`: see make_namespaces):
        the next command sees the build as it was built."""
        self.close()
        self.folder.mkdir(parents=True, exist_ok=True)
        # private: the files that keep a cell's namespaces can only be bound on a mount whose
        # events are not shared with other mount namespaces
        _mount(["--make-private", "-t", "tmpfs", "-o", f"size={self.size},mode=0700",
                SOURCE, str(self.folder)])
        for part in PARTS:
            for name in ("upper", "work", "merged"):
                (self.folder / part / name).mkdir(parents=True)
        return make_namespaces(self.folder / "ns", self.overlays(build), unroutable,
                               other_layers(self.folder))

    def overlays(self, build: Path) -> list[Overlay]:
        """The overlays of the tree and the venv over `build`'s own."""
        return [Overlay(build / part, self.folder / part / "upper", self.folder / part / "work",
                        self.folder / part / "merged") for part in PARTS]

    def merged(self, part: str) -> Path:
        """Where `part`'s overlay is mounted in the cell's mount namespace."""
        return self.folder / part / "merged"

    def changed(self) -> list[str]:
        """What the layer holds (empty right after `fresh`): the names under each upper folder."""
        return sorted(f"{part}/{name}" for part in PARTS
                      for name in os.listdir(self.folder / part / "upper"))

    def close(self) -> None:
        """Unmount the layer (and one a dead engine left) and discard what it held; the cell's
        namespaces go with the files that kept them."""
        while self.mounted:
            _mount(["-l", str(self.folder)], program="umount")


def other_layers(own: Path) -> list[Path]:
    """The cell layers mounted on the host besides `own` (other slots', of this engine or
    another): a cell's new mount namespace detaches them, or it would keep each one's memory
    alive after its slot replaced it."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, rest = line.partition(" - ")
        if rest.split()[1:2] == [SOURCE]:
            target = Path(_unescape(fields.split()[4]))
            if target != own:
                found.append(target)
    return found


def _unescape(field: str) -> str:
    """A mountinfo path with its octal escapes (space, tab, newline, backslash) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), field)


def release_stale_layers(root: Path | None = None) -> int:
    """Unmount the cell layers that engines now gone left mounted (a SIGKILL skips their
    cleanup; a tmpfs holds its memory until unmounted): those of every slot under `root`
    (default: the local backend's environments) that no live process leases. Returns how many
    were unmounted."""
    released = 0
    for layer in sorted((root or home() / "envs").glob("*/cell")):
        if not os.path.ismount(layer):
            continue
        lease = try_lease(lease_file(layer.parent), 0)
        if lease is None:  # a live engine holds the slot
            continue
        try:
            CellLayer(layer, 0).close()
            released += 1
        finally:
            lease.release()
    return released


def _mount(arguments: list[str], program: str = "mount") -> None:
    done = subprocess.run([program, *arguments], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise EnvironmentFault(f"cannot {program} the cell layer: "
                               f"{(done.stderr or done.stdout).strip()}")
