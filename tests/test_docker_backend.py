"""The docker backend on a real repository: same paths and isolation as local, warm containers.

Needs a Docker Engine and the base image: `bash scripts/docker-engine.sh && bash
scripts/build-base-image.sh` (skipped with that reason otherwise).
"""

from __future__ import annotations

import docker
import pytest

from replay.backends.docker import DockerBackend, DockerEnvironment
from replay.backends.docker_engine import OWNER, owner
from replay.errors import EnvironmentFault, InputError
from replay.instances import Instance
from replay.recipes import load_recipe


def _docker_problem() -> str | None:
    try:
        DockerBackend().close()
    except InputError as exc:
        return f"docker backend unavailable: {exc}"
    return None


PROBLEM = _docker_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=str(PROBLEM))


@pytest.fixture(scope="module")
def backend() -> DockerBackend:
    with DockerBackend() as backend:
        yield backend


@pytest.fixture(scope="module")
def env(backend: DockerBackend, tiny: Instance) -> DockerEnvironment:
    return backend.start(tiny, load_recipe(tiny))


def test_repository_is_at_testbed_with_only_the_base_commit(env: DockerEnvironment,
                                                             tiny: Instance) -> None:
    result = env.exec("pwd && git log --format=%H --all && git for-each-ref | wc -l")
    assert result.ok, result.output
    assert result.output.split() == ["/testbed", tiny.base_commit, "0"]


def test_venv_python_is_first_on_path(env: DockerEnvironment) -> None:
    result = env.exec("command -v python && python -c 'import pytest, sys; print(sys.prefix)'")
    assert result.output.split() == ["/opt/replay-venv/bin/python", "/opt/replay-venv"]


def test_commands_have_no_network_and_limits(env: DockerEnvironment) -> None:
    assert env.exec("ls /sys/class/net").output.split() == ["lo"]
    config = docker.from_env().api.inspect_container(env.container_id)["HostConfig"]
    assert config["NetworkMode"] == "none" and config["ReadonlyRootfs"]
    assert config["NanoCpus"] > 0 and config["Memory"] > 0 and config["PidsLimit"] > 0
    with pytest.raises(EnvironmentFault, match="no network"):
        env.exec("true", network=True)


def test_unroutable_address_times_out(backend: DockerBackend, tiny: Instance) -> None:
    recipe = load_recipe(tiny).model_copy(update={"unroutable": ["10.255.255.1"]})
    env = backend.start(tiny, recipe, slot=3)
    probe = ("python -c \"import socket; s = socket.socket(); s.settimeout(0.5)\n"
             "try: s.connect(('10.255.255.1', 80))\nexcept OSError as e: print(type(e).__name__)\"")
    assert env.exec(probe).output.strip() == "TimeoutError"
    env.close()


def test_root_is_read_only_and_each_command_gets_an_empty_tmp(env: DockerEnvironment) -> None:
    result = env.exec("touch /root/replay-escape-probe; echo ok > /testbed/inside.txt && "
                      "cat inside.txt && echo x > /tmp/left-over")
    assert "Read-only file system" in result.output
    assert result.output.strip().endswith("ok")
    assert env.read_file("/testbed/inside.txt") == b"ok\n"
    assert env.exec("ls -A /tmp").output == ""
    env.exec("rm inside.txt")


def test_timeout_kills_the_whole_process_group(env: DockerEnvironment) -> None:
    result = env.exec("sleep 30 & sleep 30; echo never", timeout=1)
    assert result.timed_out and not result.ok
    assert "never" not in result.output
    assert result.duration < 10
    quick = env.exec("sleep 30 & echo quick", timeout=60)
    assert quick.ok and quick.output == "quick\n" and quick.duration < 1.5
    assert env.exec("pgrep -x sleep | wc -l").output.strip() == "1"  # `sleep infinity` only


def test_exit_codes_of_commands_are_results_not_faults(env: DockerEnvironment) -> None:
    fatal = env.exec("git rev-parse no-such-ref")
    assert fatal.exit_code == 128 and fatal.duration < 1.5
    killed = env.exec("kill -9 $$")
    assert killed.exit_code == 137 and not killed.timed_out
    assert env.exec("true").ok


def test_long_output_keeps_head_and_tail(env: DockerEnvironment) -> None:
    result = env.exec("seq 1 2000000", output_limit=1000)
    assert result.truncated
    assert result.output.startswith("1\n2\n")
    assert result.output.rstrip().endswith("2000000")
    assert len(result.output) < 1100


def test_files_are_read_and_written_at_environment_paths(env: DockerEnvironment) -> None:
    env.write_file("/testbed/notes/todo.txt", b"fix square\n")
    assert env.exec("cat notes/todo.txt").output == "fix square\n"
    assert env.read_file("notes/todo.txt") == b"fix square\n"
    binary = bytes(range(256)) * 1000
    env.write_file("notes/blob.bin", binary)
    assert env.read_file("/testbed/notes/blob.bin") == binary
    with pytest.raises(FileNotFoundError):
        env.read_file("/testbed/../etc/passwd")
    with pytest.raises(FileNotFoundError):
        env.read_file("/testbed/notes")
    with pytest.raises(PermissionError):
        env.write_file("/etc/replay-probe", b"x")
    assert env.exec("ls -A .git | grep -c replay-incoming").output.strip() == "0"
    env.exec("rm -r notes")


def test_writing_an_existing_file_keeps_its_mode(env: DockerEnvironment) -> None:
    env.exec("printf 'echo one\\n' > run.sh && chmod 755 run.sh && ln -s run.sh link.sh")
    env.write_file("run.sh", b"echo two\n")
    assert env.exec("stat -c %a run.sh && ./run.sh").output.split() == ["755", "two"]
    assert env.read_file("link.sh") == b"echo two\n"
    env.exec("rm run.sh link.sh")


def test_agent_commands_do_not_see_api_keys(env: DockerEnvironment, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    assert "sk-test-secret" not in env.exec("env").output


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
