"""How long an instance's tests may run, and whose fault it is when they run out of time.

Validation measures how long the instance's tests took with the gold patch (`gold_seconds`).
A test run of a cell gets `--test-timeout` when one is given, else
max(TIMEOUT_FLOOR, TIMEOUT_FACTOR x that time): a hung suite costs minutes, not half an hour,
and a suite that is merely slow in a cell is not cut short.

Whose fault a run that timed out is:
- validation, with the gold patch: the validated tests themselves do not finish in time, a
  harness fault (the instance is `error`, validated again next time), never a verdict;
- validation, without the fix: a bug can hang its tests, so this is a failing run, as any other;
- a cell (PRE or POST): the tree is the agent's; when the timeout is at least what the gold
  patch's run took, the same tests finished on the gold tree, so the hang is the agent's code: a
  failing run, kept and marked `timed out`. A timeout shorter than that cuts the validated
  tests short: a harness fault (`error`), never a label.
"""

from __future__ import annotations

from replay.core.errors import Fault
from replay.core.vocab import FaultKind
from replay.records.grade import DEFAULT_TEST_TIMEOUT, Grade
from replay.records.validation import Validation

# Before the tests were ever timed (validation itself; `replay cell`, collect and import on an
# instance not validated on the backend) the only bound is this one, SWE-bench's own 30 minutes.


# A suite validated at one second can take tens in a cell: workers share the cores, the
# interpreter's bytecode cache is cold after a restore, the recipe reinstalls the package. Two
# minutes leaves that room and still bounds what a hang costs a cell.
TIMEOUT_FLOOR = 120.0


# A cell runs the validated tests on the agent's tree, on the machine that timed them, maybe
# beside other workers: five times the measured run absorbs that load and code that is slower
# without being hung, and a hang still costs a few runs' worth of time, not a fixed half hour.
TIMEOUT_FACTOR = 5.0


def gold_seconds(validation: Validation | None) -> float | None:
    """How long the gold patch's test run took in the instance's validation, if it finished."""
    if validation is None:
        return None
    gold = validation.checks.get("with_gold") or {}
    seconds = gold.get("seconds")
    if seconds is None or gold.get("timed_out"):
        return None
    return float(seconds)


def derived_timeout(gold: float | None) -> float:
    """The default timeout of a cell's tests: max(floor, factor x the validated run's time),
    or DEFAULT_TEST_TIMEOUT when nothing was measured."""
    if gold is None:
        return DEFAULT_TEST_TIMEOUT
    return max(TIMEOUT_FLOOR, TIMEOUT_FACTOR * gold)


def cell_timeout(given: float | None, validation: Validation | None) -> float:
    """The timeout of a cell's tests: `given` (`--test-timeout`), else the derived one."""
    return given if given is not None else derived_timeout(gold_seconds(validation))


def timed_out(grade: Grade | None) -> float | None:
    """The limit a test run ran into, when it timed out (grades kept before the limit was
    recorded ran under the default)."""
    return None if grade is None else grade.limit_reached()


def timeout_fault(grade: Grade | None, gold: float | None) -> Fault | None:
    """Why a cell's timed-out test run is a harness fault, not the agent's failure (its limit
    cuts the validated tests short), or None (it did not time out, or the hang is the agent's)."""
    limit = timed_out(grade)
    if limit is None or gold is None or limit >= gold:
        return None
    return Fault(FaultKind.HARNESS, "", f"the tests timed out after {limit:g} s, shorter than "
                 f"the {gold:g} s the gold patch's test run took in validation: choose another "
                 "--run with a larger --test-timeout, or leave it to the default")

