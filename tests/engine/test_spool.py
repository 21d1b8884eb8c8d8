"""How `spool.collect` waits for a command: its exit code, output and timeout on real processes."""

from __future__ import annotations

import subprocess
import time

from replay.environments.spool import collect


def _start(script: str, stdin: bool = False) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["bash", "-c", script],
                            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE if stdin else subprocess.STDOUT,
                            start_new_session=True)


def test_a_command_gives_its_exit_code_and_output() -> None:
    code, output, _, timed_out = collect(_start("echo out; exit 3"), 30, None, 1000)
    assert (code, output, timed_out) == (3, b"out\n", False)


def test_a_command_that_ended_before_the_wait_is_still_seen_ended() -> None:
    process = _start("echo early")
    deadline = time.monotonic() + 30
    while not _is_zombie(process.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    code, output, _, timed_out = collect(process, 30, None, 1000)
    assert (code, output, timed_out) == (0, b"early\n", False)


def test_a_command_past_its_timeout_is_killed_with_its_group() -> None:
    code, output, _, timed_out = collect(_start("sleep 30 & echo started; sleep 30"), 0.5,
                                         None, 1000)
    assert timed_out and code == 137 and output == b"started\n"


def test_stdin_is_fed_and_stderr_kept_apart() -> None:
    code, output, errors, timed_out = collect(_start("cat; echo oops >&2", stdin=True), 30,
                                              b"fed", None)
    assert (code, output, errors, timed_out) == (0, b"fed", b"oops\n", False)


def _is_zombie(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
