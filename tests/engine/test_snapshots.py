"""Snapshots on a real repository: every kind of change survives capture and restore."""

from __future__ import annotations

from typing import Any

import pytest

from replay.core.errors import SnapshotMismatch
from replay.environments import snapshots
from replay.environments.base import ExecResult
from replay.environments.local import LocalBackend
from replay.environments.local_environment import LocalEnvironment
from replay.environments.recipes import load_recipe
from replay.instances.records import Instance
from replay.records.snapshot import Snapshot


@pytest.fixture(scope="module")
def env(tiny: Instance) -> LocalEnvironment:
    return LocalBackend().start(tiny, load_recipe(tiny))


def _tree_listing(env: LocalEnvironment) -> str:
    return env.exec("git ls-files -s -o --exclude-standard | sort; "
                    "find . -path ./.git -prune -o -type f -print0 | sort -z | "
                    "xargs -0 sha256sum").output


def test_capture_and_restore_every_kind_of_change(env: LocalEnvironment, tiny: Instance) -> None:
    base = snapshots.at_base(env, tiny.base_commit)
    env.restore(base)
    env.exec("sed -i 's/side \\* side \\* side/side ** 2/' shapes/area.py && "
             "rm tests/__init__.py && mkdir -p scratch && echo 'print(1)' > scratch/repro.py && "
             "printf '\\x00\\x01\\xff' > scratch/blob.bin && chmod +x scratch/repro.py")
    snapshot = env.snapshot()
    expected = _tree_listing(env)
    assert snapshot.diff and snapshot.fingerprint != base.fingerprint

    env.restore(base)
    assert _tree_listing(env) != expected
    assert env.read_file("tests/__init__.py") == b""

    env.restore(snapshot)
    assert _tree_listing(env) == expected
    assert env.read_file("scratch/blob.bin") == b"\x00\x01\xff"
    assert env.exec("test -x scratch/repro.py").ok
    env.restore(snapshot)
    assert _tree_listing(env) == expected
    env.restore(base)


def test_restore_removes_what_the_agent_added_and_undoes_commits(env: LocalEnvironment,
                                                                  tiny: Instance) -> None:
    base = snapshots.at_base(env, tiny.base_commit)
    env.exec("echo junk > junk.py && git -c user.email=a@b -c user.name=a commit -qam wip "
             "--allow-empty && echo more >> shapes/area.py")
    env.restore(base)
    assert env.exec("git status --porcelain").output == ""
    assert env.exec("git rev-parse HEAD").output.strip() == tiny.base_commit


def test_a_snapshot_whose_fingerprint_differs_is_refused(env: LocalEnvironment,
                                                         tiny: Instance) -> None:
    base = snapshots.at_base(env, tiny.base_commit)
    forged = Snapshot(base_commit=tiny.base_commit, diff=b"",
                                fingerprint="0" * 40)
    with pytest.raises(SnapshotMismatch, match="refusing to continue"):
        env.restore(forged)
    env.restore(base)


class Counting:
    """A real environment that notes each command the engine has it run."""

    def __init__(self, env: LocalEnvironment) -> None:
        self.env = env
        self.workdir = env.workdir
        self.calls: list[str] = []

    def exec(self, command: str, **options: Any) -> ExecResult:
        self.calls.append("exec")
        return self.env.exec(command, **options)

    def write_file(self, path: str, data: bytes) -> None:
        self.calls.append("write_file")
        self.env.write_file(path, data)

    def reset(self) -> None:
        self.calls.append("reset")
        self.env.reset()

    def restore(self, snapshot: Snapshot) -> None:
        snapshots.restore(self, snapshot)  # type: ignore[arg-type]


def test_settle_restores_with_one_command_the_diff_on_its_input(env: LocalEnvironment,
                                                                 tiny: Instance) -> None:
    env.restore(snapshots.at_base(env, tiny.base_commit))
    env.exec("echo new > added.py && echo more >> shapes/area.py && "
             "mkdir -p .git/hooks && echo junk > .git/hooks/left-by-the-agent")
    counting = Counting(env)
    settled = snapshots.settle(counting, tiny.base_commit)  # type: ignore[arg-type]
    assert counting.calls == ["exec", "reset", "exec"]
    assert settled.diff and env.exec("cat added.py").output == "new\n"
    assert env.exec("test ! -e .git/hooks/left-by-the-agent").ok
    assert env.exec("ls .git | grep -c replay-").output.strip() == "0"
    env.restore(snapshots.at_base(env, tiny.base_commit))
