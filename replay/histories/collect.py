"""Phase A collection: run the agent from the start of the task and keep the tree after every step.

The agent is the project's own (`run_agent` with `task_messages` and the same tools as the
continuation agent). After each step the working tree is snapshotted (a diff, cheap), so every
step can later become a boundary without running anything again. The final tree is graded, so
each history knows whether its trajectory went on to resolve the instance.

A trajectory is identified by the instance, its task messages, the agent (model and settings)
and the sample index; once stored it is returned again without any model call or command.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from replay.agent.loop import AgentConfig, run_agent, task_messages
from replay.core.digest import digest
from replay.core.errors import HarnessError
from replay.core.paths import TESTBED
from replay.core.vocab import ExitReason, HistorySource
from replay.environments import snapshots
from replay.environments.base import Backend, Environment
from replay.environments.recipes import load_recipe
from replay.histories.trajectories import (
    record_step,
    with_context_tokens,
)
from replay.instances.records import Instance
from replay.judge.testrun import run_tests
from replay.judge.timeouts import cell_timeout
from replay.models.types import Model
from replay.records.trace import Trace
from replay.records.trajectory import Step, Trajectory
from replay.store import Store, validations
from replay.store.histories import collection_writer, keep, keep_grade, load_trajectory


@dataclass(frozen=True)
class Collected:
    """One instance's collection: the trajectory, or the harness fault that stopped it."""

    instance_id: str
    trajectory: Trajectory | None
    error: str | None = None
    reused: bool = False


def collection_key(instance: Instance, agent_id: str, config: AgentConfig,
                   seed_index: int) -> str:
    """The identity of a collected trajectory (see the module docstring)."""
    return digest({
        "kind": HistorySource.COLLECTED, "instance": instance.instance_id,
        "base_commit": instance.base_commit,
        "messages": task_messages(instance.problem_statement, TESTBED), "agent": agent_id,
        "config": asdict(config), "seed_index": seed_index})


def is_collected(store: Store, instance: Instance, agent_id: str, config: AgentConfig,
                 seed_index: int = 0) -> bool:
    """Whether the store already holds this collection (so it needs no model)."""
    key = collection_key(instance, agent_id, config, seed_index)
    return load_trajectory(store, key) is not None


class _StepRecorder:
    """The `on_step` hook: the tree and the request's input tokens after every step."""

    def __init__(self, env: Environment, base: bytes) -> None:
        self.env = env
        self.previous_diff = base
        self.previous_tokens = 0
        self.requests: list[int] = []
        self.steps: list[Step] = []

    def __call__(self, trace: Trace) -> None:
        self.requests.append(trace.input_tokens - self.previous_tokens)
        self.previous_tokens = trace.input_tokens
        step = record_step(self.env, len(trace.messages), self.previous_diff)
        self.steps.append(step)
        self.previous_diff = step.diff

    def finish(self, messages: list) -> list[Step]:
        """The steps, with their context tokens."""
        return with_context_tokens(self.steps, self.requests, messages)


def collect_trajectory(instance: Instance, backend: Backend, model: Model, agent_id: str,
                       model_name: str, config: AgentConfig, store: Store,
                       seed_index: int = 0, test_timeout: float | None = None) -> Collected:
    """Collect (or find already collected) one instance's trajectory and keep it in the store.

    The instance's environment is started only when the trajectory is not stored yet. A harness
    fault (model API after its retries, a broken environment) leaves nothing stored and is
    returned as the `error` of the result. The final tree's tests may run `test_timeout` seconds
    (default: derived from the instance's validation, see `replay.judge.timeouts`).
    """
    key = collection_key(instance, agent_id, config, seed_index)
    kept = load_trajectory(store, key)
    if kept is not None:
        return Collected(instance.instance_id, kept, reused=True)
    writer = collection_writer(store, key)
    try:
        recipe = load_recipe(instance, mirrors=backend.mirrors)
        env = backend.start(instance, recipe)
        base = snapshots.at_base(env, instance.base_commit)
        env.restore(base)
        recorder = _StepRecorder(env, base.diff)
        messages = task_messages(instance.problem_statement, TESTBED)
        trace = run_agent(model, env, messages, config, writer.trace, seed_index,
                          on_step=recorder)
        if trace.exit_reason == ExitReason.ERROR:
            return Collected(instance.instance_id, None, trace.error)
        snapshots.settle(env, instance.base_commit)  # the tests see the tree alone
        grade = run_tests(env, instance, recipe, writer.tests_log, cell_timeout(
            test_timeout, validations.find(store, instance.instance_id, backend.name)))
    except HarnessError as exc:
        return Collected(instance.instance_id, None, f"{type(exc).__name__}: {exc}")
    first_request = recorder.requests[0] if recorder.requests else 0
    trajectory = Trajectory(
        key=key, instance_id=instance.instance_id, base_commit=instance.base_commit,
        model=model_name, source=HistorySource.COLLECTED, messages=trace.messages,
        opening_tokens=first_request, steps=recorder.finish(trace.messages),
        exit_reason=trace.exit_reason, resolved=grade.resolved)
    keep_grade(store, key, grade)
    keep(store, (), [trajectory])
    return Collected(instance.instance_id, trajectory)
