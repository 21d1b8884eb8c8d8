"""The local backend bounds what a command may take, as docker does, and stays healthy after.

Memory and processes are limited by the slot's control group, the output a command prints is
read as it comes (head and tail kept, nothing spooled on the host), and what a cell writes is a
bounded tmpfs (tests/engine/test_contamination.py fills it). Small limits keep the test quick.
"""

from __future__ import annotations

import resource
import shutil
from collections.abc import Iterator

import pytest

from replay.environments.cgroups import Limits
from replay.environments.local import LocalBackend
from replay.environments.local_environment import LocalEnvironment
from replay.environments.recipes import load_recipe
from replay.instances.records import Instance

LIMITS = Limits(memory=256 << 20, pids=64, disk=64 << 20)


@pytest.fixture(scope="module")
def env(tiny: Instance) -> Iterator[LocalEnvironment]:
    backend = LocalBackend(limits=LIMITS)
    environment = backend.start(tiny, load_recipe(tiny))
    if environment.group is None:
        pytest.skip("this host offers no control group for the local backend's commands")
    yield environment
    backend.close()


def _healthy(env: LocalEnvironment) -> None:
    result = env.exec("echo healthy && python -c 'print(6 * 7)'")
    assert result.ok and result.output.split() == ["healthy", "42"], result.output


def test_a_command_that_allocates_past_the_limit_is_killed(env: LocalEnvironment) -> None:
    result = env.exec("python -c 'b = bytearray(768 << 20); b[::4096] = b\"x\" * len(b[::4096]); "
                      "print(\"allocated\")'", timeout=60)
    assert "allocated" not in result.output
    assert result.exit_code in (137, 1), result  # the OOM killer's SIGKILL, or MemoryError
    _healthy(env)


def test_a_fork_bomb_stops_at_the_process_limit(env: LocalEnvironment) -> None:
    bomb = ("python -c \"\nimport os, time\nmade = 0\ntry:\n    while made < 1000:\n"
            "        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n"
            "        made += 1\nexcept OSError as error:\n    print('stopped after', made)\n\"")
    result = env.exec(bomb, timeout=60)
    assert "stopped after" in result.output, result.output
    made = int(result.output.split("stopped after")[1].split()[0])
    assert made < LIMITS.pids
    _healthy(env)


def test_output_is_capped_without_spooling_it_on_the_host(env: LocalEnvironment) -> None:
    before = shutil.disk_usage("/tmp").used
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = env.exec("head -c 600000000 /dev/zero | tr '\\0' x; echo; echo the-end",
                      timeout=120, output_limit=10_000)
    assert result.truncated and result.output.rstrip().endswith("the-end")
    assert len(result.output) < 20_000
    assert shutil.disk_usage("/tmp").used - before < 100 << 20  # nothing like 600 MB spooled
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before  # in KiB
    assert grown < 200 << 10
    _healthy(env)
