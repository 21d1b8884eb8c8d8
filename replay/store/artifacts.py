"""Where a store keeps the files of its records, and the one way they are written.

The artifacts are a folder beside the SQLite file. A record keyed by a digest keeps its files in
`KIND/KEY[:24]/` (`keyed`): a continuation its trace, its tree's diff and its tests' log, a
history the files of its format (`replay.histories.records`), a trajectory its steps, its tests'
log and its grade; snapshot diffs are content-addressed, `snapshots/SHA256.diff` (`snapshot_diff`).
Every file is written whole or not at all (`replay.core.files.write_atomic`), and no path
computed from a key or a name leaves the folder.

Above the store no path of it is seen: a stage that writes as it runs is given a `Spool` (a
continuation's or a collection's trace, tree and tests' log), and a record's files travel to
another store packed as `Files`, which that store unpacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from replay.core.files import write_atomic
from replay.core.paths import within
from replay.records.trace import Trace

CONTINUATIONS = "continuations"
HISTORIES = "histories"
TRAJECTORIES = "trajectories"
SNAPSHOTS = "snapshots"
KEY_CHARS = 24  # of a record's key in its folder's name

TRACE = "trace.json"  # a continuation's messages and steps
TREE_DIFF = "tree.diff"  # the tree a continuation left, as the judge graded it
TESTS_LOG = "tests.log"  # what the tests printed
GRADE = "grade.json"  # a collected trajectory's grade


def folder(store_path: Path) -> Path:
    """The artifact folder of the store file at `store_path`."""
    return store_path.parent / "artifacts"


def keyed(kind: str, key: str) -> tuple[str, str]:
    """The folder, relative to the artifacts, of the record of `kind` with `key`."""
    return (kind, key[:KEY_CHARS])


def snapshot_diff(sha256: str) -> tuple[str, str]:
    """The path, relative to the artifacts, of the snapshot diff with this sha256."""
    return (SNAPSHOTS, f"{sha256}.diff")


def path(root: Path, *parts: str) -> Path:
    """`parts` under the artifact folder `root` (not yet written); one that would leave it is
    refused."""
    return within(root, *parts)


def write(root: Path, data: bytes | str, *parts: str) -> Path:
    """Write an artifact under `root` atomically and return its path."""
    return write_atomic(path(root, *parts), data)


@dataclass(frozen=True)
class Files:
    """The finished files of one record, packed by the store that has them for another store to
    unpack (a remote worker's to the run's): what is in it is the store's business."""

    entries: tuple[tuple[str, bytes], ...] = ()


def pack(root: Path, *parts: str) -> Files:
    """The finished files under the folder `parts` of the artifact folder `root`."""
    folder = path(root, *parts)
    if not folder.is_dir():
        return Files()
    return Files(tuple((found.relative_to(root).as_posix(), found.read_bytes())
                       for found in sorted(folder.rglob("*"))
                       if found.is_file() and not found.name.endswith(".partial")))


def unpack(root: Path, files: Files) -> None:
    """Write packed files under the artifact folder `root`, each atomically."""
    for relative, data in files.entries:
        write(root, data, *relative.split("/"))


class Spool:
    """Where a running record writes its files as it goes (a continuation's or a collection's
    folder): its trace after each step, the tree it left, its tests' log. A stage holds this,
    never a path; each file is written whole, so a killed run leaves the last one whole."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def trace(self, trace: Trace) -> None:
        """Keep the trace as it is now."""
        trace.save(self._folder / TRACE)

    def tree(self, diff: bytes) -> None:
        """Keep the tree the run left, as the tests will see it."""
        write_atomic(self._folder / TREE_DIFF, diff)

    def tests_log(self, text: str) -> str:
        """Keep what the tests printed; returns where it is kept (a grade's `log_path`)."""
        return str(write_atomic(self._folder / TESTS_LOG, text))
