"""What every backend must do, run for `local` and `docker` alike on a real repository.

The docker half needs a Docker Engine and the base image (`bash scripts/docker-engine.sh && bash
scripts/build-base-image.sh`) and skips with that reason otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from replay.environments.recipes import load_recipe
from replay.instances.records import Instance

from conftest import BACKENDS, make_backend_named


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Any]:
    made = make_backend_named(request.param)
    yield made
    made.close()


@pytest.fixture(scope="module")
def env(backend: Any, tiny: Instance) -> Any:
    return backend.start(tiny, load_recipe(tiny))


def test_repository_is_at_testbed_with_only_the_base_commit(env: Any, tiny: Instance) -> None:
    result = env.exec("pwd && git log --format=%H --all && git for-each-ref | wc -l")
    assert result.ok, result.output
    assert result.output.split() == ["/testbed", tiny.base_commit, "0"]


def test_venv_python_is_first_on_path(env: Any) -> None:
    result = env.exec("command -v python && python -c 'import pytest, sys; print(sys.prefix)'")
    assert result.output.split() == ["/opt/replay-venv/bin/python", "/opt/replay-venv"]


def test_commands_cannot_reach_the_hosts_loopback(env: Any) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(3)
    port = listener.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(listener.accept())

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    probe = ("python -c \"import socket; s = socket.socket(); s.settimeout(2); "
             f"s.connect(('127.0.0.1', {port}))\"")
    isolated = env.exec(probe)
    thread.join(timeout=5)
    listener.close()
    assert not isolated.ok and "ConnectionRefused" in isolated.output
    assert accepted == []


def test_unroutable_address_times_out(backend: Any, tiny: Instance) -> None:
    recipe = load_recipe(tiny).model_copy(update={"unroutable": ["10.255.255.1"]})
    env = backend.start(tiny, recipe, slot=3)
    probe = ("python -c \"import socket; s = socket.socket(); s.settimeout(0.5)\n"
             "try: s.connect(('10.255.255.1', 80))\nexcept OSError as e: print(type(e).__name__)\"")
    assert env.exec(probe).output.strip() == "TimeoutError"


def test_root_is_read_only_and_each_command_gets_an_empty_tmp(env: Any) -> None:
    result = env.exec("touch /usr/replay-escape-probe; echo ok > /testbed/inside.txt && "
                      "cat inside.txt && echo x > /tmp/left-over")
    assert "Read-only file system" in result.output
    assert result.output.strip().endswith("ok")
    assert env.read_file("/testbed/inside.txt") == b"ok\n"
    assert env.exec("ls -A /tmp").output == ""
    env.exec("rm inside.txt")


def test_timeout_kills_the_whole_process_group(env: Any) -> None:
    result = env.exec("sleep 30 & sleep 30; echo never", timeout=1)
    assert result.timed_out and not result.ok
    assert "never" not in result.output
    assert result.duration < 10
    quick = env.exec("sleep 30 & echo quick", timeout=60)
    assert quick.ok and quick.output == "quick\n" and quick.duration < 1.5


def test_exit_codes_of_commands_are_results_not_faults(env: Any) -> None:
    fatal = env.exec("git rev-parse no-such-ref")
    assert fatal.exit_code == 128 and fatal.duration < 1.5
    killed = env.exec("kill -9 $$")
    assert killed.exit_code == 137 and not killed.timed_out
    assert env.exec("true").ok


def test_long_output_keeps_head_and_tail(env: Any) -> None:
    result = env.exec("seq 1 2000000", output_limit=1000)
    assert result.truncated
    assert result.output.startswith("1\n2\n")
    assert result.output.rstrip().endswith("2000000")
    assert len(result.output) < 1100


def test_a_command_reads_the_input_it_is_given_and_none_without(env: Any) -> None:
    data = bytes(range(256)) * 4000
    given = env.exec("sha256sum - && echo said >&2", input=data)
    assert given.ok and given.output.split() == [hashlib.sha256(data).hexdigest(), "-", "said"]
    assert env.exec("wc -c").output.strip() == "0"
    assert env.exec("true", input=data).ok  # a command that never reads it just ends
    capped = env.exec("cat", input=b"line\n" * 100_000, output_limit=1000)
    assert capped.truncated and len(capped.output) < 1100


def test_a_file_read_again_before_the_next_command_is_the_first_read(env: Any) -> None:
    """The tree cannot change between two commands, so a second read runs none: a link to a
    file that changes all the time (/proc/uptime) reads the same until a command runs."""
    env.exec("ln -s /proc/uptime uptime")
    first = env.read_file("uptime")
    time.sleep(0.05)
    assert env.read_file("uptime") == first
    env.exec("true")
    assert env.read_file("uptime") != first
    env.exec("rm uptime && echo one > notes.txt")
    assert env.read_file("notes.txt") == b"one\n"
    env.write_file("notes.txt", b"two\n")
    assert env.read_file("notes.txt") == b"two\n"
    env.exec("echo three > notes.txt")
    assert env.read_file("notes.txt") == b"three\n"
    env.reset()
    with pytest.raises(FileNotFoundError):
        env.read_file("notes.txt")


def test_files_are_read_and_written_at_environment_paths(env: Any) -> None:
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
    env.exec("rm -r notes")


def test_writing_an_existing_file_keeps_its_mode(env: Any) -> None:
    env.exec("printf 'echo one\\n' > run.sh && chmod 755 run.sh && ln -s run.sh link.sh")
    env.write_file("run.sh", b"echo two\n")
    assert env.exec("stat -c %a run.sh && ./run.sh").output.split() == ["755", "two"]
    assert env.read_file("link.sh") == b"echo two\n"
    env.exec("rm run.sh link.sh")


def test_agent_commands_do_not_see_api_keys(env: Any, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    assert "sk-test-secret" not in env.exec("env").output


def test_slots_are_independent_copies_of_one_build(backend: Any, env: Any,
                                                   tiny: Instance) -> None:
    second = backend.start(tiny, load_recipe(tiny), slot=1)
    second.write_file("/testbed/only-in-slot-1.txt", b"x")
    assert second.exec("ls only-in-slot-1.txt").ok
    assert not env.exec("ls only-in-slot-1.txt").ok
    assert second.exec("python -c 'import pytest'").ok
    second.exec("rm only-in-slot-1.txt")
