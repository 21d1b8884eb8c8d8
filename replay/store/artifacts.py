"""Where a store keeps the files of its records, and the one way they are written.

The artifacts are a folder beside the SQLite file. A record keyed by a digest keeps its files in
`KIND/KEY[:24]/` (`keyed`): a continuation its trace, its tree's diff and its tests' log, a
history the files of its format (`replay.histories.records`), a trajectory its steps, its tests'
log and its grade; snapshot diffs are content-addressed, `snapshots/SHA256.diff` (`snapshot_diff`).
Every file is written whole or not at all (`replay.core.files.write_atomic`), and no path
computed from a key or a name leaves the folder.
"""

from __future__ import annotations

from pathlib import Path

from replay.core.files import write_atomic
from replay.core.paths import within

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
