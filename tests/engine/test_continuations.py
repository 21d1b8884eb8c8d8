"""PRE and POST continuations on the demo suite, driven by a scripted model over real HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replay.compaction.carriers import post_messages
from replay.compaction.summarize import parse_summarizer, summarize
from replay.core.errors import EnvironmentFault
from replay.core.paths import TESTBED
from replay.core.vocab import CellStatus, FaultKind
from replay.environments.base import Environment, ExecResult
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.histories.records import bundled_history
from replay.instances.records import Instance, load_suite
from replay.judge.grading import START, patch_files
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.pipeline.cell import CellTask, Settings, continue_and_grade, kept_result, run_cell
from replay.pipeline.continuation import Continuation
from replay.records.cell import CellId
from replay.store import Store, continuations

from agent_scripts import fixing_turns, lost_turns
from conftest import make_client

DEMO = {instance.instance_id: instance for instance in load_suite("demo").instances}


def run(instance: Instance, turns: list[dict], arm: str, tmp_path: Path,
        steps: int = 8) -> tuple[Continuation, int]:
    """One continuation against a fresh scripted server; returns it and the request count."""
    with ScriptedServer(Script(turns, model="agent")) as server:
        return run_on(server, instance, arm, tmp_path, tmp_path / "replay.db", steps), server.count


def run_on(server: ScriptedServer, instance: Instance, arm: str, tmp_path: Path,
           cache_path: Path, steps: int = 8) -> Continuation:
    """One continuation with the agent model served by `server`."""
    history = bundled_history(instance)
    assert history is not None
    recipe = load_recipe(instance)
    env = LocalBackend().start(instance, recipe)
    if arm == "pre":
        messages = history.messages
    else:
        summary = summarize(history.messages, parse_summarizer("anchor_index"))
        messages = post_messages(summary, history.messages, instance.problem_statement, TESTBED)
    with Store.open(cache_path) as store, CallCache(cache_path) as cache, \
            make_client(server.spec("agent"), cache) as client:
        return continue_and_grade(instance, history, messages, arm,
                                  Settings(server.spec("agent"), steps=steps), store,
                                  lambda _: (env, recipe), client)


@pytest.mark.parametrize("instance_id", sorted(DEMO))
def test_pre_and_post_are_told_apart(instance_id: str, tmp_path: Path) -> None:
    instance = DEMO[instance_id]
    pre, requests = run(instance, fixing_turns(instance, tmp_path), "pre", tmp_path)
    assert pre.passed is True and requests == 4
    assert pre.trace.exit_reason == "finished" and pre.trace.steps == 4
    assert pre.grade is not None and pre.grade.fail_to_pass["failure"] == []
    with Store.open_read_only(tmp_path / "replay.db") as store:
        saved, tree = continuations.trace(store, pre.key), continuations.tree(store, pre.key)
    assert saved is not None and saved.exit_reason == "finished" and len(saved.actions) >= 4
    assert saved.messages[-1]["role"] == "tool"
    assert pre.trace.files_edited == [f"/testbed/{name}" for name in
                                      patch_files(instance.patch).all]
    assert tree

    post, _ = run(instance, lost_turns(), "post", tmp_path)
    assert post.passed is False and post.fault is None
    assert post.trace.exit_reason == "finished" and post.trace.files_edited == []
    assert post.grade is not None and post.grade.fail_to_pass["failure"]
    assert post.trace.messages[1]["content"].count("<summary>") == 1


def test_step_limit_and_bad_tool_calls_count_as_steps(tmp_path: Path) -> None:
    instance = DEMO["replay-demo__tally-1"]
    turns = [{"content": "oops", "tool_calls": [
                {"function": {"name": "teleport", "arguments": {}}}]},
             {"content": "no tool at all"},
             {"content": "bad args", "tool_calls": [
                 {"function": {"name": "edit_file", "arguments": {"path": "/testbed/x"}}}]}]
    result, requests = run(instance, turns, "pre", tmp_path, steps=3)
    assert requests == 3 and result.trace.steps == 3
    assert result.trace.exit_reason == "step_limit"
    observations = [m["content"] for m in result.trace.messages[-5:] if m["role"] in ("tool",
                                                                                      "user")]
    assert "unknown tool 'teleport'" in observations[0]
    assert "called no tool" in observations[1]
    assert "argument 'old' is required" in observations[2]
    assert result.passed is False


def test_a_cached_continuation_makes_no_request(tmp_path: Path) -> None:
    instance = DEMO["replay-demo__iniconf-1"]
    turns = fixing_turns(instance, tmp_path)
    with ScriptedServer(Script(turns, model="agent")) as server:
        first = run_on(server, instance, "pre", tmp_path, tmp_path / "cache.db")
        first_requests = server.count
        again = run_on(server, instance, "pre", tmp_path, tmp_path / "cache.db")
        again_requests = server.count - first_requests
    assert first_requests == 4 and again_requests == 0
    assert first.passed and again.passed and again.reused and not first.reused
    assert again.trace.messages == first.trace.messages


@pytest.mark.parametrize("fault", [{"fault": "429", "retry_after": 0}, {"fault": "500"},
                                   {"fault": "malformed"}, {"fault": "drop"},
                                   {"fault": "slow", "seconds": 6}])
def test_a_passing_fault_is_retried_and_the_run_completes(fault: dict, tmp_path: Path) -> None:
    instance = DEMO["replay-demo__stockroom-1"]
    turns = fixing_turns(instance, tmp_path)
    result, requests = run(instance, [turns[0], fault, *turns[1:]], "pre", tmp_path)
    assert result.passed is True and requests == 5


def test_a_persistent_fault_leaves_the_run_in_error_not_failed(tmp_path: Path) -> None:
    instance = DEMO["replay-demo__stockroom-1"]
    turns = fixing_turns(instance, tmp_path)
    result, requests = run(instance, [turns[0], {"fault": "500"}], "pre", tmp_path)
    assert result.passed is None and result.grade is None
    assert result.trace.exit_reason == "error" and result.fault is not None
    assert result.fault.kind == "harness" and "500" in result.fault.message
    assert requests == 1 + 3
    with Store.open_read_only(tmp_path / "replay.db") as store:
        saved = continuations.trace(store, result.key)
    assert saved is not None and saved.exit_reason == "error"


class VanishingAtTests:
    """A real local environment whose engine breaks when the judge starts the tests (as a
    crashed container does): the eval script's command raises `EnvironmentFault`."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.workdir = env.workdir

    def exec(self, command: str, *args: Any, **kwargs: Any) -> ExecResult:
        if START in command:
            raise EnvironmentFault("the container vanished")
        return self.env.exec(command, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)


def test_a_harness_fault_while_the_tests_run_is_the_cells_fault(tmp_path: Path) -> None:
    """The agent fixes the repair; the environment breaks when the tests start. The cell is an
    `error` that keeps the fault and its stage (never a label), and nothing is kept of the
    continuation, so that it runs again next time."""
    instance = DEMO["replay-demo__stockroom-1"]
    history = bundled_history(instance)
    assert history is not None
    recipe = load_recipe(instance)
    backend = LocalBackend()
    env = VanishingAtTests(backend.start(instance, recipe))
    with ScriptedServer(Script(fixing_turns(instance, tmp_path), model="agent")) as server, \
            Store.open(tmp_path / "replay.db") as store, \
            CallCache(tmp_path / "replay.db") as cache:
        task = CellTask(CellId(instance.instance_id, "pre", "", 0), instance, history)
        try:
            result = run_cell(task, Settings(server.spec("agent")), store,
                              lambda _: (env, recipe), lambda spec: make_client(spec, cache))
        finally:
            env.close()
            backend.close()
        kept = kept_result(task, Settings(server.spec("agent")), store)
    assert result.status is CellStatus.ERROR and result.passed is None
    assert result.fault is not None and result.fault.kind == FaultKind.HARNESS
    assert (result.fault.name, result.fault.stage) == ("EnvironmentFault", "tests")
    assert "the container vanished" in result.fault.message
    assert kept is None
