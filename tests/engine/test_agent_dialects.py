"""A continuation speaks its history's dialect: mini-swe-agent's text actions and submit
sentinel, or its bash calls, against a scripted model over real HTTP in a real environment."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from replay.agent.dialects import dialect
from replay.agent.dialects.mini_text import FORMAT_ERROR
from replay.agent.loop import AgentConfig, run_agent
from replay.core.errors import InputError
from replay.environments import snapshots
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.histories.importers import read_trajectory
from replay.instances.records import load_suite
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.records.trace import Trace

from conftest import make_client
from paths import FIXTURES

MINI = FIXTURES / "trajectories" / "replay-demo__tally-1.traj.json"
TALLY = next(i for i in load_suite("demo").instances if i.instance_id == "replay-demo__tally-1")
FIX = ("sed -i -e 's/^from tally.currencies import CURRENCIES, Currency$/from tally.currencies "
       "import Currency, lookup/' -e 's/return CURRENCIES\\[code.strip().upper()\\]/return "
       "lookup(code)/' tally/money.py")
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"


def _history() -> list[dict]:
    """The mini-swe-agent history up to its edit (two read-only steps), as the import keeps it."""
    recorded = read_trajectory(MINI)
    assert recorded.dialect == "mini-swe-agent-text"
    return recorded.messages[:recorded.steps[1].end]


def _continue(turns: list[dict], dialect: str, tmp_path: Path, steps: int = 8,
              on_step: Callable[[Trace], None] | None = None) -> tuple[Trace, list[dict]]:
    env = LocalBackend().start(TALLY, load_recipe(TALLY))
    env.restore(snapshots.at_base(env, TALLY.base_commit))
    with ScriptedServer(Script(turns, model="agent")) as server, \
            CallCache(tmp_path / "calls.db") as cache, \
            make_client(server.spec("agent"), cache) as client:
        trace = run_agent(client, env, _history(), AgentConfig(max_steps=steps),
                          on_step=on_step, dialect=dialect)
        bodies = [request.body for request in server.requests]
    return trace, bodies


def test_a_text_history_continues_in_text_actions_and_ends_at_the_sentinel(
        tmp_path: Path) -> None:
    turns = [{"content": f"THOUGHT: fix the lookup.\n\n```bash\n{FIX}\n```"},
             {"content": "THOUGHT: I think it is done."},
             {"content": f"THOUGHT: submit.\n\n```bash\n{SUBMIT}\n```"}]
    trace, bodies = _continue(turns, "mini-swe-agent-text", tmp_path)
    assert (trace.exit_reason, trace.steps, trace.dialect) == ("finished", 3,
                                                                "mini-swe-agent-text")
    first = bodies[0]
    assert "tools" not in first
    roles = [m["role"] for m in first["messages"]]
    assert "tool" not in roles and not any(m.get("tool_calls") for m in first["messages"])
    assert first["messages"][2]["content"].endswith(
        "```bash\ngrep -n 'CURRENCIES' tally/money.py\n```")
    assert first["messages"][3]["content"].startswith("<returncode>0</returncode>\n<output>\n8:")
    after = trace.messages[trace.start_index:]
    assert after[1]["role"] == "user" and after[1]["content"].startswith(
        "<returncode>0</returncode>\n<output>\n")
    assert after[3] == {"role": "user", "content": FORMAT_ERROR.format(count=0)}
    assert after[5]["content"].startswith("diff --git a/tally/money.py")
    assert [action.arguments["command"] for action in trace.actions] == [FIX, SUBMIT]


def test_each_step_is_a_trace_of_its_own_that_later_steps_leave_as_it_was(
        tmp_path: Path) -> None:
    turns = [{"content": f"THOUGHT: fix the lookup.\n\n```bash\n{FIX}\n```"},
             {"content": "THOUGHT: I think it is done."},
             {"content": f"THOUGHT: submit.\n\n```bash\n{SUBMIT}\n```"}]
    seen: list[Trace] = []
    trace, _ = _continue(turns, "mini-swe-agent-text", tmp_path, on_step=seen.append)
    assert [(step.steps, len(step.actions)) for step in seen] == [(1, 1), (2, 1), (3, 2)]
    assert [len(step.messages) - trace.start_index for step in seen] == [2, 4, 6]
    assert seen[0].messages == trace.messages[:trace.start_index + 2]
    assert [step.exit_reason for step in seen] == ["running", "running", "finished"]
    assert seen[-1].messages == trace.messages and seen[-1].actions == trace.actions
    with pytest.raises(FrozenInstanceError):
        trace.steps = 0  # type: ignore[misc]


def test_the_step_limit_is_the_same_and_a_sentinel_not_at_the_start_does_not_finish(
        tmp_path: Path) -> None:
    turns = [{"content": "```bash\necho 'not yet: COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT'\n```"},
             {"content": "```bash\nls\n```\n```bash\npwd\n```"}]
    trace, _ = _continue(turns, "mini-swe-agent-text", tmp_path, steps=2)
    assert (trace.exit_reason, trace.steps) == ("step_limit", 2)
    assert trace.messages[-1]["content"] == FORMAT_ERROR.format(count=2)


def test_bash_tool_calls_end_at_the_sentinel_too(tmp_path: Path) -> None:
    turns = [{"content": "Fixing.", "tool_calls": [
        {"function": {"name": "bash", "arguments": {"command": FIX}}}]},
             {"content": "Submitting.", "tool_calls": [
        {"function": {"name": "bash", "arguments": {"command": SUBMIT}}}]}]
    trace, bodies = _continue(turns, "mini-swe-agent-tools", tmp_path)
    assert (trace.exit_reason, trace.steps) == ("finished", 2)
    assert [tool["function"]["name"] for tool in bodies[0]["tools"]] == ["bash"]
    assert trace.messages[-1]["role"] == "tool"
    assert trace.messages[-1]["content"].startswith("diff --git")


def test_tool_calls_keep_the_messages_and_an_unknown_dialect_is_bad_input() -> None:
    history = _history()
    assert dialect("tool-calls").spoken(history) == history
    command = json.loads(history[2]["tool_calls"][0]["function"]["arguments"])["command"]
    assert f"```bash\n{command}\n```" in dialect("mini-swe-agent-text").spoken(history)[2][
        "content"]
    with pytest.raises(InputError, match="unknown agent dialect 'claude'"):
        run_agent(None, None, history, AgentConfig(), dialect="claude")  # type: ignore[arg-type]
