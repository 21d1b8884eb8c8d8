"""PRE and POST cells continue a mini-swe-agent history in its own protocol: text actions, its
own instructions kept in POST, submission by its sentinel; graded in a real environment against
a scripted model over real HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.agent.loop import AgentConfig
from replay.compaction.carriers import post_messages
from replay.compaction.summarize import parse_summarizer
from replay.core.errors import InputError
from replay.core.paths import TESTBED
from replay.environments import snapshots
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.instances.records import Instance
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.pipeline.cell import CellTask, Settings, run_cell
from replay.pipeline.continuation import Start
from replay.pipeline.summary import Summarizer
from replay.records.cell import CellId, CellResult
from replay.records.snapshot import Snapshot
from replay.records.summary import Summary
from replay.store import Store, continuations

from agent_scripts import FIX, SUBMIT, mini_agent, mini_history, mini_opening
from conftest import make_client


def _cells(tiny: Instance, tmp_path: Path) -> tuple[list[CellResult], list[dict]]:
    recipe = load_recipe(tiny)
    env = LocalBackend().start(tiny, recipe)
    history = mini_history(tiny.instance_id, tiny.problem_statement,
                           snapshots.at_base(env, tiny.base_commit))
    store_path = tmp_path / "replay.db"
    with ScriptedServer(*mini_agent()) as server, Store.open(store_path) as store, \
            CallCache(store_path) as cache:
        settings = Settings(server.spec("agent"), steps=4)
        results = [run_cell(CellTask(CellId(tiny.instance_id, arm, summarizer, 0), tiny,
                                     history,
                                     Summarizer(parse_summarizer(summarizer)) if summarizer
                                     else None),
                            settings, store, lambda _: (env, recipe),
                            lambda spec: make_client(spec, cache))
                   for arm, summarizer in (("pre", ""), ("post", "anchor_index"))]
        bodies = [request.body for request in server.requests]
    return results, bodies


def test_pre_and_post_speak_the_history_protocol_and_finish_by_submission(
        tiny: Instance, tmp_path: Path) -> None:
    (pre, post), bodies = _cells(tiny, tmp_path)
    for result in (pre, post):
        assert (result.status, result.passed, result.refused) == ("done", True, None)
        found = result.diagnostics
        assert (found["exit_reason"], found["steps"], found["actions"], found["dialect"]) == (
            "finished", 2, 2, "mini-swe-agent-text")
    assert len(bodies) == 4 and all("tools" not in body for body in bodies)
    opening = mini_opening(tiny.problem_statement)
    pre_first, post_first = bodies[0]["messages"], bodies[2]["messages"]
    assert pre_first[:2] == opening
    assert pre_first[2]["content"].endswith("```bash\ncat shapes/area.py\n```")
    assert pre_first[3]["role"] == "user" and "side * side * side" in pre_first[3]["content"]
    # POST keeps the history's own instructions (one bash block, the submit sentinel), then
    # the summary; nothing else of the history
    assert post_first[:2] == opening and len(post_first) == 3
    assert "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in post_first[1]["content"]
    assert post_first[2]["content"].startswith("You already worked on this issue before")
    assert "<summary>\nIndex of literal details" in post_first[2]["content"]
    with Store.open_read_only(tmp_path / "replay.db") as store:
        trace = continuations.trace(store, post.continuation or "")
    assert trace is not None and trace.dialect == "mini-swe-agent-text"
    assert [action.arguments["command"] for action in trace.actions] == [FIX, SUBMIT]


def test_the_protocol_is_part_of_a_continuation_key(tiny: Instance) -> None:
    snapshot = Snapshot(base_commit=tiny.base_commit, diff=b"", fingerprint="f")
    history = mini_history(tiny.instance_id, tiny.problem_statement, snapshot)
    as_tools = history.model_copy(update={"dialect": "tool-calls"})
    keys = {Start.of(found, found.messages, "agent", AgentConfig(), 0).key
            for found in (history, as_tools)}
    assert len(keys) == 2
    assert as_tools.content_id() == history.content_id()  # the dialect is the agent's, not
    # the history's content


def test_a_text_history_without_its_opening_is_refused(tiny: Instance) -> None:
    snapshot = Snapshot(base_commit=tiny.base_commit, diff=b"", fingerprint="f")
    history = mini_history(tiny.instance_id, tiny.problem_statement, snapshot)
    with pytest.raises(InputError, match="mini-swe-agent-text history needs the messages"):
        post_messages(Summary("anchor_index", "x"), history.messages[2:], "issue", TESTBED,
                      dialect="mini-swe-agent-text")
