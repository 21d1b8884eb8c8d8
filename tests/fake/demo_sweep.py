"""One scripted backbone + prompt + confirm sweep on the demo suite, made once per test session
through `replay.api` in this process (the `demo_sweep` fixture of tests/conftest.py). Tests that
only read its store (report, exports, view, labels, statistics) use it instead of making their
own; a test that writes into a store makes its own.

What the scripts do is in sweep_scripts.py: summ-a writes good summaries except with the codex
prompt, summ-b always loses the thread, summ-c loses it for its first three summaries. The
agent's POST from a LOST summary fixes tally only and echoes a `<script>` on the way (the view
must show it as text).

The option types of the sweep driver are named here only (`sweep_options`), so a rename of the
api's is one line for the whole suite.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.console import Console

from replay import api
from replay.models.scripted import ReceivedRequest, ScriptedServer
from replay.models.scripts import Script
from replay.report.tables import render

from sweep_scripts import (
    DEMO,
    TALLY,
    agent_scripts,
    call,
    fix_command,
    fixture_prompts,
    models_file,
    summarizer_scripts,
)

SCRIPT = "<script>document.title='pwned'</script>"
BACKBONES = ("summ-a", "summ-b", "summ-c")
# the five prompts the fixture catalogue pins
# (hermes needs its code: tests/unit/compaction/test_hermes.py)
FIVE = ("claude-code", "codex", "gemini-cli", "opencode", "kimi-code")


def sweep_options(store: Path, **given: object) -> api.RunOptions:
    """How the tests' sweeps run: the store and the given settings (workers, budget...)."""
    return api.RunOptions(store, **given)  # type: ignore[arg-type]


def printed_report(store: Path, run: str, cells: bool = False) -> str:
    """The report of `run` as `replay report` prints it."""
    out = io.StringIO()
    render(api.report(store, run), Console(file=out, width=200), cells=cells)
    return out.getvalue()


def lost_turn(scratch: Path) -> dict:
    """The POST from a LOST summary: it fixes tally only, printing a script on the way."""
    return {"content": f"Only tally needs work. {SCRIPT}", "tool_calls": [
        call("bash", command=f"echo \"{SCRIPT}\"; " + fix_command([DEMO[TALLY]], scratch)),
        call("finish", summary="done")]}


def demo_agent(scratch: Path) -> list[Script]:
    """The continuation agent of the session's sweep (model `agent`)."""
    return [Script([lost_turn(scratch)], model="agent", contains="LOST"),
            *agent_scripts(scratch)]


@dataclass(frozen=True)
class DemoSweep:
    """The session's store (runs `backbones`, confirmed and its retention scored, and `prompts`)
    and what each step returned; `calls` counts the scripted server's requests made by each
    step, `requests` are all of them in order. `env` names the models file (aliases agent,
    summ-a/b/c on the server, closed since)."""

    store: Path
    env: dict[str, str]
    backbone: api.SweepOutcome
    again: api.SweepOutcome
    prompts: api.SweepOutcome
    confirmation: api.Confirmation
    retention: api.RunRetention
    calls: dict[str, int]
    requests: tuple[ReceivedRequest, ...]


@contextlib.contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """`env` set in this process while the sweep runs (the models file is found by HOME)."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        yield


def make_demo_sweep(folder: Path) -> DemoSweep:
    """Run the backbone sweep of summ-a, summ-b, summ-c (run `backbones`), run it again, the
    prompt sweep of summ-a over the five fixture prompts (run `prompts`) and the confirmation
    of `backbones`, all with two workers, into `folder`/runs/replay.db; then score the
    retention of `backbones`' summaries."""
    store = folder / "runs" / "replay.db"
    catalogue = fixture_prompts(folder)
    options = sweep_options(store, workers=2)
    calls: dict[str, int] = {}
    with ScriptedServer(*summarizer_scripts(), *demo_agent(folder)) as server, \
            environment(models_file(folder, server.base_url)):
        env = models_file(folder, server.base_url)

        def step(name: str, action):  # noqa: ANN001, ANN202 (any api call)
            before = server.count
            done = action()
            calls[name] = server.count - before
            return done

        backbone = api.plan("backbone", api.summarizers(BACKBONES, "claude-code"), "agent",
                            prompt_sources=catalogue)
        fit = api.HistoryChoice(fit=True)  # what `replay backbone` chooses with no instance named
        first = step("backbone", lambda: api.sweep(backbone, options, "backbones", fit))
        again = step("again", lambda: api.sweep(backbone, options, "backbones", fit))
        each = [s for name in FIVE for s in api.summarizers(["summ-a"], name)]
        prompts = api.plan("prompt", each, "agent", prompt_sources=catalogue)
        compared = step("prompts", lambda: api.sweep(prompts, options, "prompts"))
        confirmed = step("confirm", lambda: api.confirm(options, "backbones"))
        requests = tuple(server.requests)
    retention = api.retention(store, "backbones")
    return DemoSweep(store, env, first, again, compared, confirmed, retention, calls, requests)
