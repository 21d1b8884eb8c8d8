"""What only the local backend does: install steps reach the network, a build holds its venv's
bytecode, a cell's layer and namespaces are its holder's (what every backend does is in
test_backend_contract.py)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from replay.core.errors import EnvironmentFault
from replay.environments.builds import BUILD_FORMAT, READY
from replay.environments.holders import hold
from replay.environments.local import LocalBackend
from replay.environments.local_environment import LocalEnvironment
from replay.environments.recipes import load_recipe
from replay.environments.sandbox import Overlay
from replay.instances.records import Instance


@pytest.fixture(scope="module")
def env(tiny: Instance) -> LocalEnvironment:
    return LocalBackend().start(tiny, load_recipe(tiny))


def test_only_install_steps_reach_the_network(env: LocalEnvironment) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    accepted: list[object] = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True)
    thread.start()
    probe = ("python -c \"import socket; s = socket.socket(); s.settimeout(2); "
             f"s.connect(('127.0.0.1', {port}))\"")
    isolated = env.exec(probe)
    assert not isolated.ok and "ConnectionRefused" in isolated.output
    assert env.exec(probe, network=True).ok
    thread.join(timeout=5)
    listener.close()
    assert len(accepted) == 1


def test_a_build_of_an_older_layout_is_built_again(tiny: Instance, tmp_path) -> None:
    """A build whose ready record has no layout number (written by an older replay, whose
    trees no longer match their fingerprints) is built again, not restored from."""
    recipe = load_recipe(tiny)
    first = LocalBackend(root=tmp_path)
    env = first.start(tiny, recipe)
    build = env.build
    first.close()
    ready = build / READY
    record = json.loads(ready.read_text())
    assert record["format"] == BUILD_FORMAT
    del record["format"]
    ready.write_text(json.dumps(record))
    (build / "tree" / "left-by-an-old-build").write_text("stale")
    again = LocalBackend(root=tmp_path)
    try:
        env = again.start(tiny, recipe)
        rebuilt = json.loads(ready.read_text())
        assert rebuilt["format"] == BUILD_FORMAT and rebuilt["built_at"] > record["built_at"]
        assert not (build / "tree" / "left-by-an-old-build").exists()
        assert env.exec("test ! -e /testbed/left-by-an-old-build").ok
    finally:
        again.close()


def test_the_venv_is_built_with_its_bytecode(env: LocalEnvironment) -> None:
    """A command imports the venv's packages from the build's bytecode: it compiles none of them
    into the cell layer (which every cell discards)."""
    env.reset()
    assert env.exec("python -c 'import pytest, pluggy'").ok
    assert [name for name in env.layer.changed() if name.startswith("venv/")] == []


def test_a_cells_layer_is_mounted_in_its_own_namespace_alone(tiny: Instance, tmp_path) -> None:
    """Each cell's layer and overlays are mounted once per fresh layer, in the mount namespace its
    holder keeps: never on the host (nothing for a killed engine to leave there), never in another
    slot's namespace (which would keep a replaced layer's memory alive), and a replaced layer is
    gone with its holder. The slots live under a path with a space, which /proc/self/mountinfo
    escapes."""
    recipe = load_recipe(tiny)
    root = tmp_path / "two slots"
    first, second = LocalBackend(root=root), LocalBackend(root=root)
    try:
        one, other = first.start(tiny, recipe), second.start(tiny, recipe)
        one.reset()
        other.reset()
        old_holder = one.layer.holder
        assert old_holder is not None
        one.reset()
        assert not old_holder.alive and one.layer.holder is not old_holder
        seen = _mounts_in(other)
        assert str(other.layer.folder) in seen and str(other.layer.merged("tree")) in seen
        assert str(one.layer.folder) not in seen
        host = Path("/proc/self/mountinfo").read_text().replace("\\040", " ")
        assert str(root) not in host  # the layers and overlays are the cells' alone
        assert other.exec("git rev-parse HEAD").output.strip() == tiny.base_commit
        assert one.exec("echo changed > shapes/area.py && cat shapes/area.py").output == "changed\n"
        assert other.exec("cat shapes/area.py").output != "changed\n"
        assert one.layer.changed() == ["tree/shapes"] and other.layer.changed() == []
    finally:
        first.close()
        second.close()


def _mounts_in(env: LocalEnvironment) -> str:
    """The mount points of the cell's own mount namespace, as its commands see it before bwrap."""
    assert env.layer.holder is not None
    done = subprocess.run(["nsenter", f"--target={env.layer.holder.pid}", "--mount", "cat",
                           "/proc/self/mountinfo"], capture_output=True, text=True, check=True)
    return done.stdout.replace("\\040", " ")


def test_a_command_of_a_cell_whose_holder_ended_is_a_harness_fault(env: LocalEnvironment) -> None:
    """A command never runs outside its cell's namespaces nor passes their loss off as its exit
    code: with the holder gone it is a harness fault, and the next reset makes a new one."""
    env.reset()
    assert env.layer.holder is not None
    os.kill(env.layer.holder.pid, signal.SIGKILL)
    with pytest.raises(EnvironmentFault, match="holder ended"):
        env.exec("true")
    env.reset()
    assert env.exec("echo back").output == "back\n"


def test_a_holder_that_cannot_mount_its_layer_says_why(tmp_path: Path) -> None:
    layer = tmp_path / "cell"
    layer.mkdir()
    overlay = Overlay(tmp_path / "missing", layer / "upper", layer / "work", layer / "merged")
    why = r"(?s)namespaces \(exit 222\): .*setup-failed: overlay"
    with pytest.raises(EnvironmentFault, match=why):
        hold(layer, 1 << 20, [overlay], [])
    assert list(layer.iterdir()) == []  # the layer was the holder's alone


def test_the_next_layer_is_made_ahead_and_starts_empty(tiny: Instance, tmp_path) -> None:
    """A reset takes the holder made in the background while the last layer was in use: its
    own namespaces, an empty layer whatever the last cell wrote; closing ends it too."""
    backend = LocalBackend(root=tmp_path / "slots")
    try:
        env = backend.start(tiny, load_recipe(tiny))
        env.reset()
        spare = env.layer.spare
        assert spare is not None
        spare.thread.join()
        assert spare.holder is not None and spare.holder.pid != env.layer.holder.pid
        env.exec("echo changed > shapes/area.py")
        assert env.layer.changed() == ["tree/shapes"]
        env.reset()
        assert env.layer.holder is spare.holder and env.layer.changed() == []
        assert env.exec("git status --porcelain").output == ""
        following = env.layer.spare
    finally:
        backend.close()
    assert following is not None and following.holder is None and not spare.holder.alive


def test_a_read_after_a_restore_is_the_restored_trees(env: LocalEnvironment) -> None:
    """Files read right after a restore are read from the sandbox once per snapshot; any
    command or write in between is seen."""
    snapshot = env.snapshot()
    env.restore(snapshot)
    first = env.read_file("shapes/area.py")
    env.exec("echo changed > shapes/area.py")
    assert env.read_file("shapes/area.py") == b"changed\n"
    env.restore(snapshot)
    assert env.read.get("/testbed/shapes/area.py") == first  # kept from the first restore
    assert env.read_file("shapes/area.py") == first
    env.write_file("shapes/area.py", b"written\n")
    assert env.read_file("shapes/area.py") == b"written\n"
    env.restore(snapshot)
    assert env.read_file("shapes/area.py") == first
