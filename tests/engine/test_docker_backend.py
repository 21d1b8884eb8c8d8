"""What only the docker backend does: container settings, warm containers per slot, crashes,
prebuilt images (what every backend does is in test_backend_contract.py).

Needs a Docker Engine and the base image: `bash scripts/docker-engine.sh && bash
scripts/build-base-image.sh` (skipped with that reason otherwise).
"""

from __future__ import annotations

import docker
import pytest

from replay.core.errors import EnvironmentFault, InputError
from replay.environments.docker import DockerBackend, DockerEnvironment
from replay.environments.docker_engine import OWNER, owner
from replay.environments.recipes import load_recipe
from replay.instances.records import Instance

from conftest import needs_docker

pytestmark = needs_docker()


@pytest.fixture(scope="module")
def backend() -> DockerBackend:
    with DockerBackend() as backend:
        yield backend


@pytest.fixture(scope="module")
def env(backend: DockerBackend, tiny: Instance) -> DockerEnvironment:
    return backend.start(tiny, load_recipe(tiny))


def test_commands_have_no_network_and_limits(env: DockerEnvironment) -> None:
    assert env.exec("ls /sys/class/net").output.split() == ["lo"]
    config = docker.from_env().api.inspect_container(env.container_id)["HostConfig"]
    assert config["NetworkMode"] == "none" and config["ReadonlyRootfs"]
    assert config["NanoCpus"] > 0 and config["Memory"] > 0 and config["PidsLimit"] > 0
    with pytest.raises(EnvironmentFault, match="no network"):
        env.exec("true", network=True)


def test_a_command_leaves_no_process_behind_in_the_warm_container(
        env: DockerEnvironment) -> None:
    assert env.exec("sleep 30 & echo quick", timeout=60).ok
    assert env.exec("pgrep -x sleep | wc -l").output.strip() == "1"  # `sleep infinity` only


def test_containers_are_warm_per_slot_and_carry_the_owner_label(
        backend: DockerBackend, env: DockerEnvironment, tiny: Instance) -> None:
    assert backend.start(tiny, load_recipe(tiny)) is env
    second = backend.start(tiny, load_recipe(tiny), slot=1)
    assert second.container_id != env.container_id and second.image == env.image
    second.write_file("/testbed/only-in-slot-1.txt", b"x")
    assert second.exec("ls only-in-slot-1.txt").ok
    assert not env.exec("ls only-in-slot-1.txt").ok
    labels = docker.from_env().containers.get(second.container_id).labels
    assert labels[OWNER] == owner() and labels["replay.slot"] == "1"


def test_a_container_killed_from_outside_is_a_fault_and_the_next_start_recreates_it(
        backend: DockerBackend, tiny: Instance) -> None:
    env = backend.start(tiny, load_recipe(tiny), slot=2)
    docker.from_env().containers.get(env.container_id).kill()
    with pytest.raises(EnvironmentFault, match="docker container .* (exited|no longer)"):
        env.exec("true")
    again = backend.start(tiny, load_recipe(tiny), slot=2)
    assert again.container_id != env.container_id
    assert again.exec("git rev-parse HEAD").output.strip() == tiny.base_commit


def test_close_removes_every_container(tiny: Instance) -> None:
    client = docker.from_env()
    with DockerBackend() as backend:
        ids = [backend.start(tiny, load_recipe(tiny), slot=slot).container_id
               for slot in (5, 6)]
    left = client.containers.list(all=True, filters={"label": f"{OWNER}={owner()}"})
    assert not set(ids) & {container.id for container in left}


def test_a_prebuilt_image_is_used_with_our_history_and_its_conda_env(
        backend: DockerBackend, tiny: Instance) -> None:
    """A stand-in for a SWE-bench image: conda env at /opt/miniconda3/envs/testbed and a later
    commit in /testbed's history. An image that cannot be pulled falls back to the recipe."""
    client = docker.from_env()
    recipe = load_recipe(tiny)
    unpullable = tiny.model_copy(update={"image": "replay-test/never-built:1"})
    assert backend.start(unpullable, recipe, slot=7).image == backend.start(tiny, recipe).image
    assert "replay-test/never-built:1" in backend.images.unpullable
    ours = client.containers.run(backend.start(tiny, recipe).image, ["sleep", "infinity"],
                                 detach=True, labels={"replay": "1"})
    try:
        ours.exec_run(["bash", "-c", "mkdir -p /opt/miniconda3/envs && mv /opt/replay-venv "
                       "/opt/miniconda3/envs/testbed && cd /testbed && git -c user.name=a -c "
                       "user.email=b commit -q --allow-empty -m later && git branch later"])
        stand_in = ours.commit("replay-test/prebuilt", "tiny")
    finally:
        ours.remove(force=True)
    env = backend.start(tiny.model_copy(update={"image": "replay-test/prebuilt:tiny"}), recipe,
                        slot=8)
    try:
        assert client.images.get(env.image).attrs["Parent"] == stand_in.id
        listing = env.exec("git log --all --format=%H && git for-each-ref | wc -l && "
                           "readlink /opt/replay-venv && python -m pytest -q tests")
        assert listing.output.split()[:3] == [tiny.base_commit, "0",
                                              "/opt/miniconda3/envs/testbed"], listing.output
        assert "1 passed" in listing.output
    finally:
        env.close()
        client.images.remove(env.image, force=True)
        client.images.remove(stand_in.id, force=True)


def test_an_interpreter_no_one_has_is_one_line_saying_how_to_get_it(
        backend: DockerBackend) -> None:
    assert "3.11" in backend.images.base_pythons()  # Debian's own: no pyenv needed for 3.11
    with pytest.raises(InputError) as raised:
        backend.images.python_image("3.99")
    message = str(raised.value)
    assert "\n" not in message and "pyenv install 3.99" in message
    assert "uv python install 3.99" in message and "--base-image" in message
