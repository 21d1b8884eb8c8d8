"""The grade stage: the judge runs the instance's tests on the continuation's tree, in the
environment the agent worked in, and the graded continuation is kept in the store.

The tests run for at most the cell's `test_timeout`. One whose first agent request was refused
is not tested: the agent never read what it was given, and it fails (`UNREAD`).
"""

from __future__ import annotations

from dataclasses import replace

from replay.core.errors import Fault, HarnessError
from replay.core.vocab import ExitReason
from replay.environments.base import Environment
from replay.environments.recipes import Recipe
from replay.instances.records import Instance
from replay.judge.testrun import run_tests
from replay.pipeline.continuation import Continuation, unread
from replay.records.continuation import KeptContinuation
from replay.records.grade import Grade
from replay.store import Store, continuations

# The grade of a continuation whose first request was refused: nothing ran, nothing passed.
UNREAD = Grade(resolved=False, status="not run: the agent's first request was refused",
               tests_ran=False)


def grade(continuation: Continuation, instance: Instance, env: Environment, recipe: Recipe,
          store: Store, test_timeout: float) -> Continuation:
    """The continuation graded, and kept; a harness fault is the returned continuation's
    error, and such a continuation is not kept."""
    writer = continuations.writer(store, continuation.key)
    try:
        found = UNREAD if unread(continuation.trace) else run_tests(
            env, instance, recipe, writer.tests_log, test_timeout)
    except HarnessError as exc:
        trace = continuation.trace.ended(ExitReason.ERROR, f"{type(exc).__name__}: {exc}")
        writer.trace(trace)
        return replace(continuation, trace=trace, fault=Fault.of(exc, "tests"))
    graded = replace(continuation, grade=found, passed=found.resolved)
    continuations.keep(store, KeptContinuation(graded.key, graded.instance_id, graded.arm,
                                               found.resolved, found, graded.calls))
    return graded
