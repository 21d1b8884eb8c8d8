"""What only the local backend does: install steps reach the network, a build holds its venv's
bytecode (what every backend does is in test_backend_contract.py)."""

from __future__ import annotations

import json
import socket
import threading

import pytest

from replay.environments.builds import BUILD_FORMAT, READY
from replay.environments.local import LocalBackend, LocalEnvironment
from replay.environments.recipes import load_recipe
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
