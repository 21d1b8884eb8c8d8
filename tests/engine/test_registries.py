"""Compaction agents and agent dialects are classes chosen once by name: a sixth agent and a
fourth dialect, each one file under tests/, work through the summarize entry point, the carriers
and the agent loop, against a scripted model over real HTTP (and a real environment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_summarize import prompt

from replay.agent import dialects
from replay.agent.loop import AgentConfig, run_agent
from replay.compaction import agents
from replay.compaction.carriers import post_messages
from replay.compaction.summarize import parse_summarizer, summarize
from replay.core.errors import InputError
from replay.environments import snapshots
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.histories.records import bundled_history
from replay.instances.records import load_suite
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.records.history import History, history_record
from replay.records.plan import PlannedHistory
from replay.records.trace import Action, Trace

from conftest import make_client
from json_dialect import JSON_ACTIONS, NOT_JSON
from recap_agent import RECAP

DEMO = load_suite("demo").instances
HISTORY = bundled_history(DEMO[2])


def test_the_built_in_agents_and_dialects_are_found_by_name() -> None:
    assert agents.names()[:7] == ("claude-code", "codex", "gemini-cli", "opencode", "kimi-code",
                                  "hermes", "hermes-h")
    assert [agents.agent(name).calls for name in agents.BUILTIN] == [1, 1, 2, 1, 1, 1, 3]
    assert {agents.agent(name).source for name in ("hermes", "hermes-h")} == {"hermes"}
    assert parse_summarizer("m:gemini-cli+top:2").agent is agents.agent("gemini-cli")
    assert parse_summarizer("anchor_index").agent is None
    assert [dialects.dialect(name).name for name in dialects.BUILTIN] == list(dialects.BUILTIN)
    with pytest.raises(InputError, match="unknown compaction agent 'nope'"):
        agents.agent("nope")
    with pytest.raises(InputError, match="built in"):
        agents.register(agents.agent("codex"))


def test_a_sixth_agent_from_one_file_summarizes_and_carries(tmp_path: Path) -> None:
    assert HISTORY is not None
    name = parse_summarizer("backbone:recap")
    assert name.agent is RECAP and name.source_prompt == "recap"
    text = prompt("recap", user="RECAP THE WORK")
    turns = [{"content": "Thinking aloud. RECAP: fixed square() in shapes/area.py"}]
    with ScriptedServer(Script(turns, model="backbone")) as server, \
            CallCache(tmp_path / "r.db") as cache, \
            make_client(server.spec("backbone"), cache) as client:
        summary = summarize(HISTORY.messages, name, text, client)
        body = server.requests[0].body
    assert summary.text == "fixed square() in shapes/area.py"
    assert summary.details == {"recap": True} and len(summary.requests) == 1
    assert body["messages"][-1]["content"].startswith("RECAP THE WORK\n\n(")
    assert "tools" not in body
    messages = post_messages(summary, HISTORY.messages, "the issue", "/testbed", "native", text)
    assert messages[0]["role"] == "system"
    assert messages[-1] == {"role": "user", "content": f"[recap]\n{summary.text}"}
    with pytest.raises(InputError, match="recap"):
        parse_summarizer("backbone:recap-typo")


def test_a_fourth_dialect_from_one_file_runs_the_agent_loop(tmp_path: Path) -> None:
    tally = next(i for i in DEMO if i.instance_id == "replay-demo__tally-1")
    env = LocalBackend().start(tally, load_recipe(tally))
    env.restore(snapshots.at_base(env, tally.base_commit))
    opening = [{"role": "system", "content": "Act in JSON."},
               {"role": "user", "content": "List the package."}]
    turns = [{"content": "not json"}, {"content": json.dumps({"command": "ls tally"})},
             {"content": json.dumps({"done": True})}]
    with ScriptedServer(Script(turns, model="agent")) as server, \
            CallCache(tmp_path / "calls.db") as cache, \
            make_client(server.spec("agent"), cache) as client:
        trace = run_agent(client, env, opening, AgentConfig(), dialect=JSON_ACTIONS.name)
        bodies = [request.body for request in server.requests]
    assert (trace.exit_reason, trace.steps, trace.dialect) == ("finished", 3, "json-actions")
    assert "tools" not in bodies[0]
    assert trace.messages[3] == {"role": "user", "content": NOT_JSON}
    assert trace.messages[5]["content"].startswith("exit 0\n") and "money.py" in \
        trace.messages[5]["content"]
    assert [action.arguments for action in trace.actions] == [{"command": "ls tally"}]
    summary = summarize(trace.messages, parse_summarizer("tail:50"))
    post = post_messages(summary, trace.messages, "issue", "/testbed",
                         dialect=JSON_ACTIONS.name)
    assert post[:2] == opening and post[2]["role"] == "user"


def test_the_dialect_is_kept_by_its_name_and_files_of_its_old_name_still_read() -> None:
    assert HISTORY is not None
    text = HISTORY.model_copy(update={"dialect": "mini-swe-agent-text"})
    stored = history_record(text)
    assert stored["schema"] == "replay.history/2"
    assert stored["dialect"] == "mini-swe-agent-text" and "protocol" not in stored
    old = {key: value for key, value in text.model_dump(mode="json").items() if key != "dialect"}
    assert History.model_validate({**old, "protocol": "mini-swe-agent-text"}).dialect == \
        "mini-swe-agent-text"
    planned = PlannedHistory(instance_id="i", id="h", dialect="mini-swe-agent-tools")
    assert json.loads(planned.model_dump_json())["dialect"] == "mini-swe-agent-tools"
    assert PlannedHistory.model_validate({"instance_id": "i", "id": "h",
                                          "protocol": "mini-swe-agent-text"}).dialect == \
        "mini-swe-agent-text"
    trace = Trace(messages=[], start_index=0, dialect="mini-swe-agent-text",
                  actions=[Action(1, "bash", {"command": "ls"}, "", 0, 0.1)])
    kept = trace.to_dict()
    assert (kept["schema"], kept["dialect"]) == ("replay.trace/2", "mini-swe-agent-text")
    assert "protocol" not in kept
    assert Trace.from_dict(json.loads(json.dumps(kept))) == trace
    version_1 = {("protocol" if key == "dialect" else key): value for key, value in kept.items()
                 if key != "schema"}
    assert Trace.from_dict(version_1) == trace
