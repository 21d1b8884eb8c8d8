"""One cell, from its task to its result: summary -> continuation -> grade -> diagnostics.

What the store already keeps is found once, before a cell is handed to a worker (`lookup`):
a cell whose summary and continuation are both kept is answered from the store alone, with no
environment and no model; else its task carries the summary the store keeps, if any, so that a
worker on any machine continues from it. `run_cell` then calls the stages in one direction, each
with the records it needs:

1. `replay.pipeline.summary`: a POST cell's summary, written now (unless the task carries it),
   handed over as the run's carrier does (`replay.compaction.carriers.start_messages`), and
   kept in the store (`replay.store.summaries`);
2. `replay.pipeline.continuation`: the agent continues from the history (PRE) or the summary
   (POST) on the restored snapshot;
3. `replay.pipeline.grade`: the instance's tests on the continuation's tree;
4. `replay.pipeline.diagnostics`: protocol step 10, from the typed trace.

A request the server refuses for its content is a result, not a fault: a refused summarizer
request is kept in place of the summary and fails the POST (nothing to continue from); a refused
agent request ends the continuation. Either marks the cell `refused`, is answered from the
store next time, and never marks it `error`.
A summary that breaks its method's own rules (the study's H over its allowance) is kept too,
and fails the POST the same way, with nothing continued (exit `invalid_summary`); never `error`.

A cell's tests run for at most its `test_timeout`; tests that ran into it fail the cell, which
keeps the limit as `timed_out`, unless the limit is shorter than the validated tests took with
the gold patch: then the cell is an `error` (see `replay.judge.timeouts`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from replay.agent.loop import AgentConfig
from replay.compaction.carriers import start_messages
from replay.compaction.sources import PromptText
from replay.core.digest import canonical_json
from replay.core.errors import Fault
from replay.core.vocab import CellStatus, ExitReason
from replay.environments.base import Environment
from replay.environments.recipes import Recipe
from replay.instances.records import Instance
from replay.judge.timeouts import timed_out, timeout_fault
from replay.models.types import Message, Model, ModelSpec
from replay.pipeline.calls import Recorder
from replay.pipeline.continuation import (
    Continuation,
    Start,
    continue_agent,
    kept_continuation,
    model_id,
)
from replay.pipeline.diagnostics import diagnose, refused_diagnostics
from replay.pipeline.grade import grade
from replay.pipeline.summary import (
    Summarized,
    Summarizer,
    kept_summary,
    write_summary,
)
from replay.records.cell import CellId, CellResult
from replay.records.grade import DEFAULT_TEST_TIMEOUT
from replay.records.history import History
from replay.records.trace import Trace
from replay.store import Store, summaries


@dataclass(frozen=True)
class Settings:
    """What every cell of a run shares: the continuation agent, the carrier, the step limit and
    the sampling temperature."""

    agent: ModelSpec
    carrier: str = "summary-only"
    steps: int = 8
    temperature: float = 0.0

    @property
    def agent_id(self) -> str:
        return model_id(self.agent)

    @property
    def agent_key(self) -> str:
        """The agent in a continuation's key: its model, and its request settings if it has any
        (a continuation made with other settings is another continuation)."""
        extra = self.agent.request_settings()
        return self.agent_id + (f" {canonical_json(extra, spaced=True)}" if extra else "")

    @property
    def config(self) -> AgentConfig:
        return AgentConfig(max_steps=self.steps, temperature=self.temperature)


@dataclass(frozen=True)
class CellTask:
    """Everything a worker needs to run one cell, on any machine: a POST cell's summarizer, the
    seconds its tests may run, and what the gold patch's test run took in validation."""

    cell: CellId
    instance: Instance
    history: History
    summarizer: Summarizer | None = None  # None for PRE
    test_timeout: float = DEFAULT_TEST_TIMEOUT
    gold_seconds: float | None = None
    summarized: Summarized | None = None  # a POST's summary the store keeps (see `lookup`)


def run_cell(task: CellTask, settings: Settings, store: Store,
             environment: Callable[[Instance], tuple[Environment, Recipe]],
             model: Callable[[ModelSpec], Model]) -> CellResult:
    """Run one cell in the environment `environment(instance)` gives; faults become an `error`
    result, refused requests a `done` one marked `refused` (see the module docstring).

    `model(spec)` gives the client to call a model through. Writes the summary and the
    continuation to `store`; the cell's own row is the caller's to write. A POST whose task
    carries no kept summary (`lookup` finds it) has its summary written now.
    """
    started = time.monotonic()
    summarized = task.summarized
    continuation = None
    stage = "summarizer"
    try:
        summarized, messages = _begin(task, settings, store, model)
        if summarized is None or summarized.usable:
            stage = ""
            start = Start.of(task.history, messages, settings.agent_key, settings.config,
                             task.cell.seed_index)
            continuation = run_and_grade(task.instance, task.history, start, task.cell.arm,
                                         settings, store, environment, model(settings.agent),
                                         task.test_timeout)
    except Exception as exc:  # a cell's fault is its result: recorded, retried next run
        return CellResult(task.cell, CellStatus.ERROR,
                          summary=None if summarized is None else summarized.key,
                          fault=Fault.of(exc, stage), seconds=time.monotonic() - started)
    return result_of(task, continuation, summarized, time.monotonic() - started)


def _begin(task: CellTask, settings: Settings, store: Store,
           model: Callable[[ModelSpec], Model]) -> tuple[Summarized | None, list[Message]]:
    """A POST's summary (the task's kept one, or written now and kept) and the messages the
    continuation starts from (none when the summary leaves nothing to continue from)."""
    summarizer = task.summarizer
    history = task.history
    seed_index = task.cell.seed_index
    summarized = task.summarized
    identity = None
    if summarizer is not None and summarized is None:
        identity = summarizer.identity()
        summarized = write_summary(summarizer, history, seed_index, model)
    messages: list[Message] = []
    if summarized is None or summarized.usable:
        summary = None if summarized is None else summarized.summary
        messages = start_messages(history, task.instance.problem_statement, summary,
                                  settings.carrier, _prompt(task))
    if summarizer is not None and summarized is not None and identity is not None:
        summarized = replace(summarized, key=summaries.keep_written(
            store, identity, history, seed_index, summarizer.name.name, summarized.summary,
            summarized.refused))
    return summarized, messages


def _prompt(task: CellTask) -> PromptText | None:
    return None if task.summarizer is None else task.summarizer.prompt


def continue_and_grade(instance: Instance, history: History, messages: list[Message], arm: str,
                       settings: Settings, store: Store,
                       environment: Callable[[Instance], tuple[Environment, Recipe]],
                       model: Model, seed_index: int = 0,
                       test_timeout: float = DEFAULT_TEST_TIMEOUT) -> Continuation:
    """The continuation of `history` from `messages`, graded: the one the store keeps (unless
    its tests timed out under a shorter limit than `test_timeout`), else run now in the
    environment `environment(instance)` gives and graded there."""
    start = Start.of(history, messages, settings.agent_key, settings.config, seed_index)
    kept = kept_continuation(store, start.key, test_timeout)
    if kept is not None:
        return kept
    return run_and_grade(instance, history, start, arm, settings, store, environment, model,
                         test_timeout)


def run_and_grade(instance: Instance, history: History, start: Start, arm: str,
                  settings: Settings, store: Store,
                  environment: Callable[[Instance], tuple[Environment, Recipe]], model: Model,
                  test_timeout: float = DEFAULT_TEST_TIMEOUT) -> Continuation:
    """The continuation from `start`, run now in the environment `environment(instance)`
    gives and graded there."""
    key = start.key
    continuation = Continuation(key, instance.instance_id, arm, None,
                                Trace(messages=start.messages, start_index=len(start.messages),
                                      dialect=history.dialect), None, None)
    env, recipe = environment(instance)
    calls: list[str] = []
    ran = continue_agent(continuation, history, instance.base_commit, env,
                         Recorder(model, settings.agent, calls), settings.config, store,
                         start.seed_index)
    ran = replace(ran, calls=tuple(calls))
    if ran.trace.exit_reason == ExitReason.ERROR:
        return ran
    return grade(ran, instance, env, recipe, store, test_timeout)


def result_of(task: CellTask, continuation: Continuation | None, summarized: Summarized | None,
              seconds: float, reused: bool = False) -> CellResult:
    """The cell's result from its graded continuation: `error` when the harness failed or the
    tests timed out under a limit shorter than the gold patch's run; a POST's with nothing
    continued (no `continuation`: its summary is not usable) fails (`stopped`). `reused`: the
    store answered the cell (a kept continuation says so itself)."""
    if continuation is None:
        assert summarized is not None
        return stopped(task.cell, summarized, seconds, reused)
    trace = continuation.trace
    refused = trace.error if trace.exit_reason == ExitReason.REFUSED else None
    summary_id, summary = (None, None) if summarized is None else (summarized.key,
                                                                   summarized.summary)
    found = diagnose(trace, task.history.messages, summary, task.instance.patch)
    fault = timeout_fault(continuation.grade, task.gold_seconds)
    if continuation.passed is None or fault:
        return CellResult(task.cell, CellStatus.ERROR, summary=summary_id,
                          fault=continuation.fault or fault, seconds=seconds)
    return CellResult(task.cell, CellStatus.DONE, continuation.passed, continuation.key, summary_id,
                      continuation.reused, found, seconds=seconds, refused=refused,
                      timed_out=timed_out(continuation.grade))


def summarizer_refused(cell: CellId, summary_id: str, why: str, seconds: float = 0.0,
                       reused: bool = False) -> CellResult:
    """A POST whose summarizer request was refused: it fails, with nothing continued."""
    return CellResult(cell, CellStatus.DONE, False, summary=summary_id, reused=reused,
                      diagnostics=refused_diagnostics(), seconds=seconds,
                      refused=f"summarizer request refused: {why}")


def stopped(cell: CellId, summarized: Summarized, seconds: float = 0.0,
            reused: bool = False) -> CellResult:
    """A POST with nothing to continue from (`Summarized.usable` is false), which fails: its
    summarizer's request was refused, or its summary breaks its method's own rules
    (`Summary.invalid`: the study's H over its allowance scores zero, with no fallback)."""
    if summarized.summary is None:
        return summarizer_refused(cell, summarized.key, summarized.refused or "", seconds,
                                  reused)
    return CellResult(cell, CellStatus.DONE, False, summary=summarized.key, reused=reused,
                      diagnostics={**refused_diagnostics(ExitReason.INVALID_SUMMARY),
                                   "summary_invalid": summarized.summary.invalid},
                      seconds=seconds)


def kept_result(task: CellTask, settings: Settings, store: Store) -> CellResult | None:
    """The cell's result from the store alone, when its summary (or the summarizer's refusal)
    and its continuation are kept."""
    found = lookup(task, settings, store)
    return found if isinstance(found, CellResult) else None


def lookup(task: CellTask, settings: Settings, store: Store) -> CellTask | CellResult:
    """The cell's result from the store alone, when it keeps the cell's summary (or the
    summarizer's refusal) and its continuation; else the task to run, carrying the summary the
    store keeps (so that a worker on any machine continues from it and never writes it
    again)."""
    summarized = None
    if task.summarizer is not None:
        summarized = kept_summary(task.summarizer, task.history, task.cell.seed_index, store)
        if summarized is None:
            return task
    continuation = None
    if summarized is None or summarized.usable:  # else nothing to continue from: it fails
        summary = None if summarized is None else summarized.summary
        messages = start_messages(task.history, task.instance.problem_statement, summary,
                                  settings.carrier, _prompt(task))
        continuation = kept_continuation(
            store, Start.of(task.history, messages, settings.agent_key, settings.config,
                            task.cell.seed_index).key, task.test_timeout)
        if continuation is None:
            return replace(task, summarized=summarized)
    found = result_of(task, continuation, summarized, 0.0, reused=True)
    # a kept continuation is graded: an error says its tests timed out under a limit shorter
    # than the gold patch's run (`timeout_fault`), and the cell runs again
    return replace(task, summarized=summarized) if found.status == CellStatus.ERROR else found
