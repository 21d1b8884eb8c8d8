"""A sweep interrupted by a real signal (Ctrl-C's SIGINT, or SIGTERM) says in one line what it
kept, exits at once (130, as Ctrl-C), and the same command resumes it (issue 25: an
interrupted run exited 130 without a word)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from replay.models.scripted import ScriptedServer
from replay.store import Store
from replay.store.runs import load_cells

from conftest import REPLAY, run_replay
from sweep_scripts import (
    STOCKROOM,
    TALLY,
    agent_scripts,
    fixture_prompts,
    models_file,
    summarizer_scripts,
)

KEPT = re.compile(r"^interrupted: (\d+) of (\d+) cell\(s\) finished and kept in the store; the "
                  r"same command resumes the others$", re.M)


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_sweep_says_what_it_kept(sent: signal.Signals, tmp_path: Path) -> None:
    store = tmp_path / "runs" / "replay.db"
    sweep = ["backbone", "--model", "summ-a", "--model", "summ-b", "--agent-model", "agent",
             "--instance", STOCKROOM, "--instance", TALLY, "--run", "cut",
             "--prompt-sources", str(fixture_prompts(tmp_path)), "--store", str(store)]
    with ScriptedServer(*summarizer_scripts(), *agent_scripts(tmp_path, lost_sleep=30)) as server:
        env = models_file(tmp_path, server.base_url)
        process = subprocess.Popen([*REPLAY, *sweep], env={**os.environ, **env, "COLUMNS": "200"},
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # cells run in plan order on one worker; the first LOST POST (stockroom, summ-b) sleeps
        # 30 s in its command after its only request: the signal comes while it sleeps
        deadline = time.monotonic() + 120
        while not any(r.model == "agent" and "LOST" in json.dumps(r.body)
                      for r in server.requests):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        time.sleep(1)
        sent_at = time.monotonic()
        process.send_signal(sent)
        out, err = process.communicate(timeout=60)
        waited = time.monotonic() - sent_at
        assert process.returncode == 130, out + err
        assert waited < 15, f"{waited:.0f} s from the signal to the exit"  # not the 30 s sleep
        kept = KEPT.findall(out)
        assert len(kept) == 1, out + err
        with Store.open(store) as opened:
            written = len(load_cells(opened, "cut"))
        assert kept[0] == (str(written), "6") and written == 3, out
        assert "Traceback" not in err, err
        resumed = run_replay(*sweep, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "3 of 6 cell(s)" not in resumed.stdout
    with Store.open(store) as opened:
        assert len(load_cells(opened, "cut")) == 6
