"""The kept store (tests/fixtures/store, see its README): a small demo sweep written by an older
replay, so that every later one proves it opens it, reports it the same and extends it.

Run as a script, it writes the fixture again: `.venv/bin/python tests/fake/store_fixture.py`. It
works in FOLDER (a fixed path, so the one path the store keeps, the prompt catalogue's, is the
same on every machine), with the scripted models of sweep_scripts.py on loopback at PORT (fixed:
the agent's and the summarizers' base URLs are part of every key, so the test that extends the
store must serve them at the same address to find what the store already holds).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from replay.models.scripted import ScriptedServer

from conftest import run_replay
from paths import FIXTURES
from sweep_scripts import INICONF, STOCKROOM, agent_scripts, models_file, summarizer_scripts

FIXTURE = FIXTURES / "store"
FOLDER = Path("/tmp/replay-store-fixture")
PORT = 29417  # below Linux's ephemeral range, so no client socket is ever given it
RUN = "kept"
SUMMARIZERS = ("summ-a", "summ-b")


@contextlib.contextmanager
def scripted_server(scratch: Path, wait: float = 300) -> Iterator[ScriptedServer]:
    """The summarizers and the agent of sweep_scripts.py, served at PORT; while another test
    (another checkout on this machine) holds the port, wait up to `wait` seconds for it."""
    server = ScriptedServer(*summarizer_scripts(), *agent_scripts(scratch), port=PORT)
    deadline = time.monotonic() + wait
    while True:
        try:
            server.__enter__()
            break
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                raise
            time.sleep(1)
    try:
        yield server
    finally:
        server.__exit__(None, None, None)


def backbone(env: dict[str, str], store: Path, catalogue: Path, run: str,
             models: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """`replay backbone` of `models` on stockroom and iniconf into `store` (checked: exit 0)."""
    args = ["backbone", "--agent-model", "agent", "--instance", STOCKROOM, "--instance", INICONF,
            "--store", str(store), "--prompt-sources", str(catalogue), "--run", run]
    for model in models:
        args += ["--model", model]
    done = run_replay(*args, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def report(store: Path, env: dict[str, str], *run: str) -> str:
    """What `replay report [RUN]` prints for the store, its folder written as STORE."""
    done = run_replay("report", *run, "--store", str(store), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.replace(str(store.parent), "STORE")


def write_fixture() -> None:
    """Run the demo sweep in FOLDER and copy its store and report into FIXTURE."""
    from sweep_scripts import fixture_prompts

    shutil.rmtree(FOLDER, ignore_errors=True)
    os.environ["REPLAY_HOME"] = str(FOLDER / "home")
    store = FOLDER / "store" / "replay.db"
    catalogue = fixture_prompts(FOLDER)
    with scripted_server(FOLDER / "scratch") as server:
        env = models_file(FOLDER, server.base_url)
        print(backbone(env, store, catalogue, RUN, SUMMARIZERS).stdout)
    printed = report(store, env)
    shutil.rmtree(FIXTURE, ignore_errors=True)
    FIXTURE.mkdir(parents=True)
    assert not store.with_name("replay.db-wal").exists(), "the sweep left its WAL behind"
    shutil.copy(store, FIXTURE / "replay.db")
    shutil.copytree(store.parent / "artifacts", FIXTURE / "artifacts")
    (FIXTURE / "report.txt").write_text(printed)
    shutil.rmtree(FOLDER)  # nothing may read the fixture from where it was written
    print(printed)


if __name__ == "__main__":
    write_fixture()
