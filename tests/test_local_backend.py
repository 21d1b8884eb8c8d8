"""The local backend on a real repository: fixed path, no network, limits, file access."""

from __future__ import annotations

import socket
import threading

import pytest

from replay.backends.local import LocalBackend, LocalEnvironment
from replay.instances import Instance
from replay.recipes import load_recipe


@pytest.fixture(scope="module")
def env(tiny: Instance) -> LocalEnvironment:
    return LocalBackend().start(tiny, load_recipe(tiny))


def test_repository_is_at_testbed_with_only_the_base_commit(env: LocalEnvironment,
                                                             tiny: Instance) -> None:
    result = env.exec("pwd && git log --format=%H --all && git for-each-ref | wc -l")
    assert result.ok, result.output
    assert result.output.split() == ["/testbed", tiny.base_commit, "0"]


def test_venv_python_is_first_on_path(env: LocalEnvironment) -> None:
    result = env.exec("command -v python && python -c 'import pytest, sys; print(sys.prefix)'")
    assert result.output.split() == ["/opt/replay-venv/bin/python", "/opt/replay-venv"]


def test_commands_have_no_network(env: LocalEnvironment) -> None:
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


def test_unroutable_address_times_out(tiny: Instance) -> None:
    env = LocalBackend().start(tiny, load_recipe(tiny))
    env.unroutable = ["10.255.255.1"]
    probe = ("python -c \"import socket; s = socket.socket(); s.settimeout(0.5)\n"
             "try: s.connect(('10.255.255.1', 80))\nexcept OSError as e: print(type(e).__name__)\"")
    assert env.exec(probe).output.strip() == "TimeoutError"


def test_host_outside_the_environment_is_read_only(env: LocalEnvironment) -> None:
    result = env.exec("touch /root/replay-escape-probe; "
                      "echo ok > /testbed/inside.txt && cat inside.txt")
    assert "Read-only file system" in result.output
    assert result.output.strip().endswith("ok")
    assert (env.tree / "inside.txt").read_text() == "ok\n"
    (env.tree / "inside.txt").unlink()


def test_timeout_kills_the_whole_process_group(env: LocalEnvironment) -> None:
    result = env.exec("sleep 30 & sleep 30; echo never", timeout=1)
    assert result.timed_out and not result.ok
    assert "never" not in result.output
    assert result.duration < 10


def test_long_output_keeps_head_and_tail(env: LocalEnvironment) -> None:
    result = env.exec("seq 1 200000", output_limit=1000)
    assert result.truncated
    assert result.output.startswith("1\n2\n")
    assert result.output.rstrip().endswith("200000")
    assert len(result.output) < 1100


def test_files_are_read_and_written_at_environment_paths(env: LocalEnvironment) -> None:
    env.write_file("/testbed/notes/todo.txt", b"fix square\n")
    assert env.exec("cat notes/todo.txt").output == "fix square\n"
    assert env.read_file("notes/todo.txt") == b"fix square\n"
    with pytest.raises(FileNotFoundError):
        env.read_file("/testbed/../etc/passwd")
    with pytest.raises(PermissionError):
        env.write_file("/etc/replay-probe", b"x")
    env.exec("rm -r notes")


def test_agent_commands_do_not_see_api_keys(env: LocalEnvironment, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    assert "sk-test-secret" not in env.exec("env").output


def test_slots_are_independent_copies_of_one_build(tiny: Instance) -> None:
    backend = LocalBackend()
    first = backend.start(tiny, load_recipe(tiny))
    second = backend.start(tiny, load_recipe(tiny), slot=1)
    assert second.root != first.root and second.tree != first.tree
    second.write_file("/testbed/only-in-slot-1.txt", b"x")
    assert second.exec("ls only-in-slot-1.txt").ok
    assert not first.exec("ls only-in-slot-1.txt").ok
    assert second.exec("python -c 'import pytest'").ok
    second.exec("rm only-in-slot-1.txt")
