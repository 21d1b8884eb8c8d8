"""What only the local backend does: install steps reach the network (what every backend does is
in test_backend_contract.py)."""

from __future__ import annotations

import socket
import threading

import pytest

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
