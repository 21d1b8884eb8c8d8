"""One continuation: restore the snapshot, run the agent, keep its tree, and grade it.

PRE and POST differ only in the messages the agent starts from; both restore the same snapshot
and are graded by the same judge in the same environment (the shared directory).

A continuation speaks its history's dialect (`History.dialect`: replay's tool calls, or
mini-swe-agent's text actions or bash calls ending at its submit sentinel), in PRE and POST
alike and with the same step limit; its trace records the dialect.

A continuation is identified by what determines it: the instance, the snapshot, the starting
messages, the dialect, the agent (model and settings) and the sample index. The dialect
enters the key (as `protocol`, its name when it entered) only when it is not `tool-calls`, so
the keys of continuations kept before it was part of them stay valid. A finished one is kept in the
store and returned again without running anything: tool outputs such as test timings differ from
run to run, so a re-run could not be answered from the model cache alone. One that ended in a
harness fault is not kept, and runs again next time.

One whose agent request was refused for its content (a context too long) is kept like any
other: refused at a later step, its tree is graded as at a step limit; refused at the first
step, the agent never read what it was given (the summary, or the history), and it fails
without its tests being run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from replay.agent.loop import AgentConfig, run_agent
from replay.core.digest import digest
from replay.core.errors import HarnessError
from replay.environments import snapshots
from replay.environments.base import Environment
from replay.environments.recipes import Recipe
from replay.instances.records import Instance
from replay.judge.testrun import run_tests
from replay.judge.timeouts import DEFAULT_TEST_TIMEOUT, still_holds
from replay.models.types import Message, Model, ModelSpec
from replay.records.grade import Grade
from replay.records.history import History
from replay.records.trace import Trace
from replay.store import Store
from replay.store.artifacts import CONTINUATIONS, TESTS_LOG, TRACE, TREE_DIFF, keyed

# The grade of a continuation whose first request was refused: nothing ran, nothing passed.
UNREAD = Grade(resolved=False, status="not run: the agent's first request was refused",
               tests_ran=False)


@dataclass
class Continuation:
    """The outcome of one continuation: passed is None when the harness failed (an `error`)."""

    key: str
    instance_id: str
    arm: str
    passed: bool | None
    trace: Trace
    grade: Grade | None
    error: str | None
    artifacts: Path
    reused: bool = False

    @property
    def trace_path(self) -> Path:
        return self.artifacts / TRACE

    @property
    def tree_path(self) -> Path:
        return self.artifacts / TREE_DIFF


def model_id(spec: ModelSpec) -> str:
    """What identifies the continuation agent's model in a continuation's key."""
    return f"{spec.provider}:{spec.model}@{spec.base_url}"


def continuation_key(instance: Instance, history: History, messages: list[Message],
                     agent_id: str, config: AgentConfig, seed_index: int) -> str:
    """The identity of a continuation (see the module docstring)."""
    content = {"instance": instance.instance_id, "snapshot": history.snapshot.fingerprint,
               "messages": messages, "agent": agent_id, "config": asdict(config),
               "seed_index": seed_index}
    if history.dialect != "tool-calls":
        content["protocol"] = history.dialect  # the key's name from before the rename
    return digest(content)


def continue_and_grade(instance: Instance, history: History, env: Environment, recipe: Recipe,
                       model: Model, agent_id: str, messages: list[Message], arm: str,
                       config: AgentConfig, store: Store, seed_index: int = 0,
                       test_timeout: float = DEFAULT_TEST_TIMEOUT) -> Continuation:
    """Restore the boundary, continue the agent from `messages`, save its tree, run the tests
    (for at most `test_timeout` seconds: a kept continuation whose tests timed out under a
    shorter limit runs again)."""
    key = continuation_key(instance, history, messages, agent_id, config, seed_index)
    artifacts = store.folder(CONTINUATIONS, key)
    kept = _kept(store, key, artifacts)
    if kept is not None and still_holds(kept.grade, test_timeout):
        return kept
    result = Continuation(key, instance.instance_id, arm, None,
                          Trace(messages=messages, start_index=len(messages),
                                dialect=history.dialect), None, None, artifacts)
    try:
        env.restore(history.snapshot)
        result.trace = run_agent(model, env, messages, config, result.trace_path, seed_index,
                                 dialect=history.dialect)
        if result.trace.exit_reason == "error":
            result.error = result.trace.error
            return result
        if result.trace.exit_reason == "refused" and result.trace.steps == 0:
            result.grade = UNREAD
        else:
            tree = snapshots.settle(env, instance.base_commit)  # the tests see this alone
            store.write_artifact(tree.diff, *keyed(CONTINUATIONS, key), TREE_DIFF)
            result.grade = run_tests(env, instance, recipe, artifacts / TESTS_LOG,
                                     test_timeout)
    except HarnessError as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        result.trace.exit_reason = "error"
        result.trace.error = result.error
        result.trace.save(result.trace_path)
        return result
    result.passed = result.grade.resolved
    store.record_continuation(key, instance.instance_id, arm, result.passed,
                              json.dumps(result.grade.to_dict()))
    return result


def _kept(store: Store, key: str, artifacts: Path) -> Continuation | None:
    record = store.continuation(key)
    if record is None or not (artifacts / TRACE).is_file():
        return None
    trace_data = json.loads((artifacts / TRACE).read_text(encoding="utf-8"))
    trace = Trace.from_dict(trace_data)
    grade = Grade(**json.loads(record["grade"]))
    return Continuation(key, record["instance_id"], record["arm"], record["passed"], trace,
                        grade, None, artifacts, reused=True)
