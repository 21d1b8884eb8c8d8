"""The continuation stage: restore the snapshot, run the agent from its start, keep its tree.

PRE and POST differ only in the messages the agent starts from
(`replay.compaction.carriers.start_messages`): the full history, or what the run's carrier makes
of the summary. Both restore the same snapshot and are
graded by the same judge in the same environment (the shared directory; see
`replay.pipeline.grade`).

A continuation speaks its history's dialect (`History.dialect`: replay's tool calls, or
mini-swe-agent's text actions or bash calls ending at its submit sentinel), in PRE and POST
alike and with the same step limit; its trace records the dialect.

A continuation is identified by what determines it (its `Start`): the instance, the snapshot,
the starting messages, the dialect, the agent (model and settings) and the sample index. The dialect
enters the key (as `protocol`, its name when it entered) only when it is not `tool-calls`, so
the keys of continuations kept before it was part of them stay valid. A finished one is kept in
the store and returned again without running anything: tool outputs such as test timings differ
from run to run, so a re-run could not be answered from the model cache alone. One that ended in
a harness fault is not kept, and runs again next time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from replay.agent.loop import AgentConfig, run_agent
from replay.core.digest import digest
from replay.core.errors import Fault, HarnessError
from replay.core.vocab import ActionFormat, ExitReason
from replay.environments import snapshots
from replay.environments.base import Environment
from replay.models.types import Message, Model, ModelSpec
from replay.records.grade import Grade
from replay.records.history import History
from replay.records.trace import Trace
from replay.store import Store, continuations


@dataclass(frozen=True)
class Continuation:
    """One continuation, as far as it went: passed is None until it is graded, and stays None
    when the harness failed (an `error`, with its `fault`); `calls` are the keys of its agent
    steps' model calls, in order. Each stage returns a new one (`continue_agent`, `grade`)."""

    key: str
    instance_id: str
    arm: str
    passed: bool | None
    trace: Trace
    grade: Grade | None
    fault: Fault | None
    reused: bool = False
    calls: tuple[str, ...] = ()


def model_id(spec: ModelSpec) -> str:
    """What identifies the continuation agent's model in a continuation's key."""
    return f"{spec.provider}:{spec.model}@{spec.base_url}"


@dataclass(frozen=True)
class Start:
    """What determines a continuation (see the module docstring): the history's instance,
    snapshot and dialect, the messages the agent starts from, the agent (`Settings.agent_key`),
    its loop's settings and the sample index. `key` is the continuation's identity."""

    instance_id: str
    fingerprint: str
    dialect: str
    messages: list[Message]
    agent: str
    config: AgentConfig
    seed_index: int

    @classmethod
    def of(cls, history: History, messages: list[Message], agent: str, config: AgentConfig,
           seed_index: int) -> Start:
        """The start of a continuation of `history` from `messages`."""
        return cls(history.instance_id, history.snapshot.fingerprint, history.dialect, messages,
                   agent, config, seed_index)

    @property
    def key(self) -> str:
        content = {"instance": self.instance_id, "snapshot": self.fingerprint,
                   "messages": self.messages, "agent": self.agent,
                   "config": asdict(self.config), "seed_index": self.seed_index}
        if self.dialect != ActionFormat.TOOL_CALLS:
            content["protocol"] = self.dialect  # the key's name from before the rename
        return digest(content)


def kept_continuation(store: Store, key: str, test_timeout: float) -> Continuation | None:
    """The graded continuation the store keeps under `key`, with its trace, if any and if it
    answers a test run allowed `test_timeout` seconds (not when its tests timed out under a
    shorter limit)."""
    kept = continuations.find(store, key)
    trace = continuations.trace(store, key) if kept is not None else None
    if kept is None or trace is None or (kept.grade is not None
                                         and not kept.grade.answers(test_timeout)):
        return None
    return Continuation(key, kept.instance_id, kept.arm, kept.passed, trace, kept.grade, None,
                        reused=True, calls=kept.calls)


def continue_agent(continuation: Continuation, history: History, base_commit: str,
                   env: Environment, model: Model, config: AgentConfig, store: Store,
                   seed_index: int = 0) -> Continuation:
    """The continuation once the agent ran: restore the history's snapshot, run the agent from
    the continuation's start and keep its final tree (what the tests see); a harness fault is
    the returned continuation's error. Its trace (step by step) and tree are written through
    the store's `continuations.writer`."""
    trace = continuation.trace
    writer = continuations.writer(store, continuation.key)
    try:
        env.restore(history.snapshot)
        trace = run_agent(model, env, trace.messages, config, writer.trace, seed_index,
                          dialect=history.dialect)
        if trace.exit_reason == ExitReason.ERROR:
            return replace(continuation, trace=trace, fault=trace.fault)
        if not unread(trace):
            writer.tree(snapshots.settle(env, base_commit).diff)
        return replace(continuation, trace=trace)
    except HarnessError as exc:
        ended = trace.ended(ExitReason.ERROR, f"{type(exc).__name__}: {exc}")
        writer.trace(ended)
        return replace(continuation, trace=ended, fault=Fault.of(exc))


def unread(trace: Trace) -> bool:
    """Whether the agent's first request was refused: it never read what it was given (the
    summary, or the history), and nothing it did is graded."""
    return trace.exit_reason == ExitReason.REFUSED and trace.steps == 0
