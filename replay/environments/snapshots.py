"""Snapshots of a working tree: capture, restore, fingerprint.

A snapshot is the base commit, a binary diff from it that includes untracked files (ignored files
excepted), and a fingerprint: the git tree hash of base + diff. Restore resets the environment to
its validated state (`Environment.reset`: the tree with `.git/` and ignored files, and the venv,
as built), applies the diff and checks the fingerprint; a mismatch raises. Everything runs through
`Environment.exec`, so every backend restores the same way, and the diff travels on a command's
output (base64) or standard input, never through a file the agent could have replaced by a link.
"""

from __future__ import annotations

import base64
import shlex

from replay.core.errors import EnvironmentFault, SnapshotMismatch
from replay.environments.base import Environment
from replay.records.snapshot import Snapshot

TREE_MARK = "replay-tree:"
DIFF_MARK = "replay-diff:"
DIFF_LIMIT = 1 << 30  # characters of base64 a captured diff may take on a command's output
# git's index and new objects go to a scratch folder in the command's own /tmp (empty when the
# command starts and gone after it, on both backends: nothing to name uniquely or clean up), the
# repository's objects are read through an alternate: the fingerprint writes nothing to the
# tree, so it works on a full cell layer and never follows a link the agent planted in .git/
SCRATCH = "/tmp/replay-fingerprint"
GIT_SCRATCH = ('GIT_INDEX_FILE="$replay_scratch/index" '
               'GIT_OBJECT_DIRECTORY="$replay_scratch/objects" '
               'GIT_ALTERNATE_OBJECT_DIRECTORIES="$PWD/.git/objects"')


def fingerprint_script(base_commit: str, scratch: str = SCRATCH) -> str:
    """Shell lines that print the tree hash of the working tree (base + every non-ignored file).

    The index starts as a copy of the repository's: `read-tree --reset` keeps the stat data of
    the entries that still match the base tree, so `add -A` hashes only the files that changed
    (into `scratch`, a folder that must not exist yet: see GIT_SCRATCH).
    """
    return f"{_scratch(scratch)} && {_tree_hash(base_commit)}"


def _scratch(folder: str = SCRATCH) -> str:
    return f"replay_scratch={shlex.quote(folder)}"


def _tree_hash(base_commit: str) -> str:
    return (f'mkdir "$replay_scratch" "$replay_scratch/objects" && export {GIT_SCRATCH} && '
            f'{{ cp .git/index "$replay_scratch/index" 2>/dev/null || true; }} && '
            f"git read-tree --reset {shlex.quote(base_commit)} && git add -A && git write-tree")


def _run(env: Environment, script: str, what: str, output_limit: int = 100_000,
         data: bytes | None = None) -> str:
    result = env.exec(f"cd {env.workdir} && {script}", timeout=300, output_limit=output_limit,
                      input=data)
    if not result.ok:
        raise EnvironmentFault(f"{what} failed (exit {result.exit_code}): {result.output[-500:]}")
    return result.output.strip()


def fingerprint(env: Environment, base_commit: str) -> str:
    """The tree hash of the environment's working tree."""
    return _run(env, fingerprint_script(base_commit), "fingerprint").splitlines()[-1]


def capture(env: Environment, base_commit: str) -> Snapshot:
    """Record the working tree as base commit + binary diff + fingerprint."""
    output = _run(
        env,
        f"{_scratch()} && tree=$({_tree_hash(base_commit)}) && echo && echo {TREE_MARK}$tree && "
        f"echo {DIFF_MARK}$({GIT_SCRATCH} git diff --cached --binary --full-index "
        f"{shlex.quote(base_commit)} | base64 -w0)",
        "snapshot capture", output_limit=DIFF_LIMIT)
    lines = output.splitlines()
    tree = next((line[len(TREE_MARK):] for line in lines if line.startswith(TREE_MARK)), None)
    diff = next((line[len(DIFF_MARK):] for line in lines if line.startswith(DIFF_MARK)), None)
    if not tree or diff is None:
        raise EnvironmentFault(f"snapshot capture printed no tree and diff: {output[-300:]}")
    return Snapshot(base_commit=base_commit, diff=base64.b64decode(diff), fingerprint=tree)


def restore(env: Environment, snapshot: Snapshot) -> None:
    """Reset the environment to its validated state, apply the diff, check the fingerprint: one
    command after the reset, the diff on its standard input."""
    env.reset()
    base = shlex.quote(snapshot.base_commit)
    apply = "git apply --binary --whitespace=nowarn - && " if snapshot.diff else ""
    tree = _run(env, f"{apply}{fingerprint_script(base)}", "snapshot restore",
                data=snapshot.diff or None).splitlines()[-1]
    if tree != snapshot.fingerprint:
        raise SnapshotMismatch(
            f"restored tree {tree[:12]} does not match snapshot fingerprint "
            f"{snapshot.fingerprint[:12]}; refusing to continue"
        )


def at_base(env: Environment, base_commit: str) -> Snapshot:
    """The snapshot of the untouched base commit."""
    tree = _run(env, f"git rev-parse {shlex.quote(base_commit)}^{{tree}}", "base tree")
    return Snapshot(base_commit=base_commit, diff=b"", fingerprint=tree.splitlines()[-1])


def settle(env: Environment, base_commit: str) -> Snapshot:
    """The tree a command sequence left, alone: captured, then restored on the validated state,
    so that what the tests see is exactly the snapshot (the tree's tracked and untracked files)
    and nothing else the commands left (`.git/` hooks, ignored files, the venv, processes)."""
    snapshot = capture(env, base_commit)
    env.restore(snapshot)
    return snapshot
