"""Snapshots of a working tree: capture, restore, fingerprint.

A snapshot is the base commit, a binary diff from it that includes untracked files (ignored files
excepted), and a fingerprint: the git tree hash of base + diff. Restore resets the tree to the base
commit, removes untracked files, applies the diff and checks the fingerprint; a mismatch raises.
Everything runs through `Environment.exec`, so every backend restores the same way.
"""

from __future__ import annotations

import hashlib
import shlex

from pydantic import BaseModel, ConfigDict

from replay.environments.base import Environment
from replay.errors import EnvironmentFault, SnapshotMismatch

DIFF_PATH = ".git/replay-snapshot.diff"
INDEX_PATH = ".git/replay-index"


class Snapshot(BaseModel):
    """The working tree at a boundary."""

    model_config = ConfigDict(frozen=True)

    base_commit: str
    diff: bytes
    fingerprint: str

    @property
    def diff_sha256(self) -> str:
        return hashlib.sha256(self.diff).hexdigest()


def fingerprint_script(base_commit: str) -> str:
    """Shell lines that print the tree hash of the working tree (base + every non-ignored file).

    The private index persists between calls: `read-tree --reset` keeps the stat data of the
    entries that still match the base tree, so `add -A` hashes only the files that changed.
    """
    return (
        f"export GIT_INDEX_FILE={INDEX_PATH} && "
        f"{{ [ -f {INDEX_PATH} ] || cp .git/index {INDEX_PATH} 2>/dev/null || true; }} && "
        f"git read-tree --reset {shlex.quote(base_commit)} && git add -A && git write-tree"
    )


def _run(env: Environment, script: str, what: str) -> str:
    result = env.exec(f"cd {env.workdir} && {script}", timeout=300)
    if not result.ok:
        raise EnvironmentFault(f"{what} failed (exit {result.exit_code}): {result.output[-500:]}")
    return result.output.strip()


def fingerprint(env: Environment, base_commit: str) -> str:
    """The tree hash of the environment's working tree."""
    return _run(env, fingerprint_script(base_commit), "fingerprint").splitlines()[-1]


def capture(env: Environment, base_commit: str) -> Snapshot:
    """Record the working tree as base commit + binary diff + fingerprint."""
    tree = _run(
        env,
        f"{fingerprint_script(base_commit)} && "
        f"git diff --cached --binary --full-index {shlex.quote(base_commit)} > {DIFF_PATH}",
        "snapshot capture",
    ).splitlines()[-1]
    diff = env.read_file(f"{env.workdir}/{DIFF_PATH}")
    return Snapshot(base_commit=base_commit, diff=diff, fingerprint=tree)


def restore(env: Environment, snapshot: Snapshot) -> None:
    """Reset to the base commit, apply the diff, and check the fingerprint."""
    base = shlex.quote(snapshot.base_commit)
    apply = ""
    if snapshot.diff:
        env.write_file(f"{env.workdir}/{DIFF_PATH}", snapshot.diff)
        apply = f"git apply --binary --whitespace=nowarn {DIFF_PATH} && "
    tree = _run(
        env,
        f"git reset -q --hard {base} && git clean -q -fd && {apply}{fingerprint_script(base)}",
        "snapshot restore",
    ).splitlines()[-1]
    if tree != snapshot.fingerprint:
        raise SnapshotMismatch(
            f"restored tree {tree[:12]} does not match snapshot fingerprint "
            f"{snapshot.fingerprint[:12]}; refusing to continue"
        )


def at_base(env: Environment, base_commit: str) -> Snapshot:
    """The snapshot of the untouched base commit."""
    tree = _run(env, f"git rev-parse {shlex.quote(base_commit)}^{{tree}}", "base tree")
    return Snapshot(base_commit=base_commit, diff=b"", fingerprint=tree.splitlines()[-1])
