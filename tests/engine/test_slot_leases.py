"""A working tree belongs to one process: slots are leases, a dead holder's tree is restored
before reuse, and a dead engine's containers go when the next one starts. Real processes, real
git repositories, a scripted model server on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from replay.core.errors import EnvironmentFault
from replay.environments.docker_engine import OWNER
from replay.environments.leases import try_lease
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.instances.records import Instance, load_suite
from replay.judge.grading import patch_files
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from agent_scripts import fixing_turns, lost_turns
from conftest import REPLAY, needs_docker

TALLY = next(i for i in load_suite("demo").instances if i.instance_id == "replay-demo__tally-1")

HOLD = """
import sys, time
from replay.environments.recipes import load_recipe
from replay.instances.records import load_suite
instance = next(i for i in load_suite("demo").instances if i.instance_id == sys.argv[1])
"""

DIRTY = HOLD + """
from replay.environments.local import LocalBackend
env = LocalBackend().start(instance, load_recipe(instance))
env.write_file("/testbed/" + sys.argv[2], b"half edited\\n")
env.write_file("/testbed/stray.py", b"x = 1\\n")
env.exec("touch .git/index.lock")  # what git leaves when killed mid-write
assert sorted(env.layer.changed()) == [f"tree/{name}" for name in sorted(
    {".git", sys.argv[2].split("/")[0], "stray.py"})], env.layer.changed()
print(env.root, flush=True)
time.sleep(600)
"""

EXIT_UNCLOSED = HOLD + """
from replay.environments.local import LocalBackend
print(LocalBackend().start(instance, load_recipe(instance)).lease.path, flush=True)
"""

CONTAINERS = HOLD + """
from replay.environments.docker import DockerBackend
backend = DockerBackend()
ids = [backend.start(instance, load_recipe(instance), slot=slot).container_id for slot in (0, 1)]
print(" ".join(ids), flush=True)
time.sleep(600)
"""


def _held_by_a_killed_process(script: str, *args: str) -> str:
    """Run `script` until it prints its line, SIGKILL it, and return the line."""
    process = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline().strip()  # type: ignore[union-attr]
        assert line, process.stderr.read()  # type: ignore[union-attr]
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL
    return line


def _warm_slots(instance: Instance, count: int) -> None:
    """Build the instance and copy `count` slots now, so that no run spends its head start
    copying one."""
    backend = LocalBackend()
    for slot in range(count):
        backend.start(instance, load_recipe(instance), slot=slot)
    backend.close()


def test_two_runs_at_once_on_one_instance_do_not_grade_each_others_tree(tmp_path: Path) -> None:
    """Two `replay run` processes on one instance at the same time (same REPLAY_HOME, different
    stores): an agent that fixes the bug (it passes alone) and one that does nothing (it fails
    alone). Sharing one tree, the idle run's tests ran on the other's fix and passed."""
    _warm_slots(TALLY, 2)
    fixer = fixing_turns(TALLY, tmp_path)
    fixer[-1] = {"fault": "slow", "seconds": 20, **fixer[-1]}  # its fix sits in the tree 20 s
    idle = lost_turns()
    idle[0] = {"fault": "slow", "seconds": 6, **idle[0]}  # grades once the fix is written
    with ScriptedServer(Script(fixer, model="fixer"), Script(idle, model="idle")) as server:
        runs = {name: subprocess.Popen(
            [*REPLAY, "cell", "--instance", TALLY.instance_id, "--arm", "pre", "--agent-model",
             f"openai:{name}@{server.base_url}", "--store", str(tmp_path / f"{name}.db")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "COLUMNS": "200"}) for name in ("fixer", "idle")}
        try:
            idle_output = runs["idle"].communicate(timeout=300)[0]
            overlapped = runs["fixer"].poll() is None and server.count_for("fixer") == 4
            fixer_output = runs["fixer"].communicate(timeout=300)[0]
        finally:
            for process in runs.values():
                process.kill()
    assert overlapped, f"the idle run must be graded while the fix is in the tree: {idle_output}"
    assert runs["idle"].returncode == 1 and "tests fail" in idle_output, idle_output
    assert runs["fixer"].returncode == 0 and "tests pass" in fixer_output, fixer_output


def test_a_tree_left_dirty_by_a_killed_process_is_restored_for_the_next() -> None:
    """A process SIGKILLed mid-cell had edits, a stray file and git's index.lock in its slot's
    cell layer; the layer went with it (nothing of it on the host), and the next process to
    lease that slot gets the build as it was (a new empty layer), and git works in it."""
    edited = patch_files(TALLY.patch).all[0]
    root = Path(_held_by_a_killed_process(DIRTY, TALLY.instance_id, edited))
    assert not (root / "cell" / "tree").exists()  # the layer was its holder's alone
    backend = LocalBackend()
    try:
        env = backend.start(TALLY, load_recipe(TALLY))
        assert env.root == root
        status = env.exec("git status --porcelain --ignored=no && git rev-parse HEAD && "
                          "test ! -e .git/index.lock")
        assert status.ok and status.output.split() == [TALLY.base_commit], status.output
        assert (TALLY.repo_files / edited).read_bytes() == env.read_file(edited)
    finally:
        backend.close()


def test_a_process_that_exits_without_closing_its_backend_leaves_its_slot_clean() -> None:
    """A normal exit without `close()` is not a death in the slot: the next holder must not
    take the tree for a dirty one."""
    done = subprocess.run([sys.executable, "-c", EXIT_UNCLOSED, TALLY.instance_id],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lease = try_lease(Path(done.stdout.strip()), 0)
    assert lease is not None and lease.left_by == ""
    lease.release()


def test_a_second_holder_gets_another_slot_and_a_forked_child_never_frees_its_parents(
        tiny: Instance) -> None:
    """Within one process and across a fork: a slot has one holder; a forked child that
    inherits the lock and closes it leaves the parent's slot held."""
    first, second = LocalBackend(), LocalBackend()
    try:
        mine = first.start(tiny, load_recipe(tiny))
        assert first.start(tiny, load_recipe(tiny)) is mine
        other = second.start(tiny, load_recipe(tiny))
        assert other.root != mine.root
        read, write = os.pipe()
        child = os.fork()
        if child == 0:
            try:
                theirs = first.start(tiny, load_recipe(tiny))
                os.write(write, str(theirs.root).encode())
                first.close()
            finally:
                os._exit(0)
        os.close(write)
        theirs = os.read(read, 4096).decode()
        os.waitpid(child, 0)
        assert theirs and theirs not in (str(mine.root), str(other.root))
        assert mine.lease is not None and try_lease(mine.lease.path, 0) is None
        assert mine.exec("git rev-parse HEAD").output.strip() == tiny.base_commit
    finally:
        first.close()
        second.close()
    again = try_lease(mine.lease.path, 0)
    assert again is not None and not again.left_by  # released cleanly
    again.release()


def test_a_rebuild_never_removes_the_build_from_under_its_holder(tiny: Instance) -> None:
    """Slot 0 is the build itself: rebuilding it while another holder works in it would delete
    that holder's tree, so the rebuild is refused until slot 0 is free."""
    holder, rebuilder = LocalBackend(), LocalBackend()
    try:
        mine = holder.start(tiny, load_recipe(tiny))  # slot 0, unless held elsewhere already
        with pytest.raises(EnvironmentFault, match="slot 0 is in use"):
            rebuilder.start(tiny, load_recipe(tiny), rebuild=True)
        assert mine.exec("git rev-parse HEAD").output.strip() == tiny.base_commit
    finally:
        holder.close()
        rebuilder.close()


def _replay_containers() -> list:
    return docker.from_env().containers.list(all=True, filters={"label": "replay=1"},
                                             ignore_removed=True)


def _owned_by(pid: int) -> set[str]:
    return {c.id for c in _replay_containers() if f":{pid}:" in c.labels.get(OWNER, "")}


@needs_docker()
def test_containers_of_a_killed_engine_are_gone_once_the_next_command_starts(
        tmp_path: Path) -> None:
    """Docker kept a SIGKILLed engine's containers until `replay clean`; now the next command
    that starts a docker backend removes them, and leaves those of live engines alone."""
    from replay.environments.docker import DockerBackend

    with DockerBackend() as live:
        kept = live.start(TALLY, load_recipe(TALLY)).container_id
        killed = _held_by_a_killed_process(CONTAINERS, TALLY.instance_id).split()
        assert len(killed) == 2 and kept not in killed  # never one container for two engines
        assert set(killed) <= {c.id for c in _replay_containers()}
        with subprocess.Popen([*REPLAY, "validate", "--backend", "docker", "--instance",
                               TALLY.instance_id, "--store", str(tmp_path / "r.db")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) as process:
            try:
                deadline = time.monotonic() + 300
                while not _owned_by(process.pid) and process.poll() is None:
                    assert time.monotonic() < deadline, "the next command made no container"
                    time.sleep(0.1)
                remaining = {c.id for c in _replay_containers()}
                output = process.communicate(timeout=300)[0]
            finally:
                process.kill()
        assert process.returncode == 0, output
        assert not remaining & set(killed)
        assert kept in remaining
