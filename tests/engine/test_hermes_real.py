"""The study's H through Hermes' real `ContextCompressor._generate_summary` (the pinned wheel in
its own venv, made by scripts/setup.sh), on a ReMe panel history, its model call answered by the
scripted model server on 127.0.0.1 through replay's model client: Hermes' own redaction of a
planted secret, its own provenance validation rejecting a malformed summary, its prefix stripped
by its own helper, the study's budget, and at most three attempts at 0.8."""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path

from replay.compaction.fusion import count_tokens
from replay.compaction.hermes_native import PINNED_DATE, interpreter
from replay.compaction.summarize import parse_summarizer, summarize
from replay.core.paths import instances_dir
from replay.histories.records import load_history_file
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.records.summary import Summary

from conftest import make_client
from hermes_scripts import NO_USER, PROMPT

SECRET = "sk-" + "q7" * 16


def history() -> list[dict]:
    """The payment task's history with a secret planted in its first tool output."""
    messages = load_history_file(instances_dir() / "reme" / "reme__payment-1" /
                                 "history.json").messages
    planted = [dict(m) for m in messages]
    first = next(i for i, m in enumerate(planted) if m["role"] == "tool")
    planted[first]["content"] += f"\napi_key={SECRET}\n"
    return planted


@cache
def prefix() -> str:
    """Hermes' SUMMARY_PREFIX, as its own venv's package has it."""
    shown = subprocess.run([str(interpreter()), "-c", "import agent.context_compressor as c; "
                            "print(c.SUMMARY_PREFIX, end='')"], capture_output=True, text=True,
                           check=True, encoding="utf-8")
    return shown.stdout


def reply(words: int, snapshot: str = NO_USER) -> dict[str, str]:
    """A reply echoing Hermes' prefix, then a body of `words` one-token words and the secret."""
    return {"content": f"{prefix()}\n{snapshot}## Critical Context\n"
                       f"{' '.join(['facts'] * words)} {SECRET}"}


def run(tmp_path: Path, *replies: dict[str, str]) -> tuple[Summary, list[str]]:
    """H on the history; returns its summary and the prompts the server received."""
    with ScriptedServer(Script(list(replies), model="summ")) as server, \
            CallCache(tmp_path / "calls.db") as cache, \
            make_client(server.spec("summ"), cache) as client:
        summary = summarize(history(), parse_summarizer("summ:hermes-h"), PROMPT, client)
        prompts = [r.body["messages"][0]["content"] for r in server.requests]
    return summary, prompts


def test_the_real_class_redacts_strips_its_prefix_and_is_carried_like_s(tmp_path: Path) -> None:
    summary, prompts = run(tmp_path, reply(10))
    assert summary.details["valid"] is True and summary.details["allowance"] == 256
    assert summary.text.startswith("Summary:\n" + NO_USER + "## Critical Context\nfacts")
    assert prefix()[:40] not in summary.text  # Hermes' own helper stripped it
    assert SECRET not in summary.text  # Hermes redacted the reply ...
    [prompt] = prompts
    assert SECRET not in prompt and "api_key=" in prompt  # ... and its own input
    assert "Target ~256 tokens." in prompt and "WORD LIMIT: at most 89 words" in prompt
    assert "Create a structured checkpoint summary" in prompt and PINNED_DATE in prompt
    task = history()[1]["content"]
    assert f'FOCUS TOPIC: "{task}"' in prompt  # the task is the focus ...
    assert "TURNS TO SUMMARIZE" in prompt and prompt.count(task) == 2  # ... not a turn


def test_its_own_validation_rejects_a_summary_that_invents_a_user(tmp_path: Path) -> None:
    invented = "## Historical Task Snapshot\nUser asked: investigate the payment incident.\n"
    summary, prompts = run(tmp_path, *[reply(10, invented)] * 3)
    assert len(prompts) == 3 and summary.details["valid"] is False
    assert summary.details["invalid"] == (
        "hermes-h: Hermes returned no summary after 3 attempts: Context compression summary "
        "invented user attribution for a session with no user-authored turns")


def test_three_attempts_each_at_0_8_of_the_last_then_invalid(tmp_path: Path) -> None:
    summary, prompts = run(tmp_path, reply(400), reply(300), reply(260), reply(5))
    assert len(prompts) == 3  # the fourth reply is never asked for
    assert [a["target"] for a in summary.details["attempts"]] == [256, 204, 163]
    assert ["Target ~256 tokens." in prompts[0], "Target ~204 tokens." in prompts[1],
            "Target ~163 tokens." in prompts[2]] == [True, True, True]
    assert ["at most 89 words" in prompts[0], "at most 71 words" in prompts[1],
            "at most 57 words" in prompts[2]] == [True, True, True]
    body = summary.text.removeprefix("Summary:\n")
    assert summary.details["attempts"][-1]["tokens"] == count_tokens(body) > 256
    assert summary.details["invalid"] == (
        f"hermes-h: {count_tokens(body)} tokens after 3 attempts, over the allowance of 256")
    fits, _ = run(tmp_path / "b", reply(400), reply(20))
    assert fits.details["valid"] is True
    assert [a["target"] for a in fits.details["attempts"]] == [256, 204]


def test_the_request_holds_no_probe_and_no_expected_value(tmp_path: Path) -> None:
    _, (prompt,) = run(tmp_path, reply(10))
    probes = json.loads((instances_dir() / "reme" / "reme__payment-1" / "probes.json")
                        .read_text())["probes"][0]
    assert probes["question"] not in prompt and "regression_attempt_counts" not in prompt
