"""Protocol step 2: check an instance before any model is called.

An instance is `valid` when the base commit with test_patch fails FAIL_TO_PASS (a real repair),
the gold patch resolves it (FAIL_TO_PASS pass, PASS_TO_PASS stay passing), and restoring a snapshot
twice gives the identical tree. Otherwise it is `excluded`, with its reasons. A fault of the
harness makes it `error`, never `excluded`; so do tests that time out with the gold patch (see
`replay.judge.timeouts`). How long the gold patch's test run took is recorded
(`checks["with_gold"]["seconds"]`): the default timeout of the instance's cells derives from it.
"""

from __future__ import annotations

import functools
import shlex
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from replay.core.errors import HarnessError, InputError
from replay.core.vocab import ValidationStatus
from replay.environments import snapshots
from replay.environments.base import Backend, Environment
from replay.environments.recipes import Recipe, load_recipe
from replay.instances.records import Instance
from replay.judge.testrun import run_tests
from replay.records.grade import DEFAULT_TEST_TIMEOUT, Grade
from replay.records.snapshot import Snapshot
from replay.records.validation import Validation
from replay.store import Store, validations

PROBE_FILE = ".replay-restore-probe"


def apply_patch(env: Environment, patch: str, what: str, instance: Instance) -> None:
    """Apply a patch to the tree (one command, the patch on its standard input); a patch that
    does not apply is bad input."""
    result = env.exec("git apply --whitespace=nowarn -", timeout=120, input=patch.encode())
    if not result.ok:
        reason = result.output.strip().splitlines()[0] if result.output.strip() else "git apply"
        raise InputError(f"instance {instance.instance_id}: {what} does not apply: {reason}")


def _summary(grade: Grade) -> dict[str, Any]:
    return {"resolved": grade.resolved, "status": grade.status, "tests_ran": grade.tests_ran,
            "fail_to_pass": grade.fail_to_pass, "pass_to_pass": grade.pass_to_pass,
            "log": grade.log_path, "seconds": round(grade.duration, 2),
            "timed_out": grade.timed_out, "timeout": grade.timeout}


def check_restore(env: Environment, snapshot: Snapshot) -> tuple[bool, str]:
    """Restore the snapshot twice; both trees must carry its fingerprint."""
    seen = []
    for _ in range(2):
        try:
            env.restore(snapshot)
        except snapshots.SnapshotMismatch as exc:
            return False, str(exc)
        seen.append(snapshots.fingerprint(env, snapshot.base_commit))
    if seen[0] != seen[1] or seen[0] != snapshot.fingerprint:
        return False, f"restores gave trees {seen[0][:12]} and {seen[1][:12]}"
    return True, ""


def validate_instance(instance: Instance, backend: Backend, store: Store,
                      rebuild: bool = False,
                      boundary: Snapshot | None = None,
                      recipe: Recipe | None = None,
                      test_timeout: float | None = None) -> Validation:
    """Run the three checks on one instance and record the verdict in the store.

    The restore check restores `boundary` (the snapshot of the instance's history) twice, or
    a snapshot of a probe file when the instance has none. `recipe` defaults to the instance's;
    each test run may take `test_timeout` seconds (default DEFAULT_TEST_TIMEOUT).
    """
    recipe = recipe or load_recipe(instance, mirrors=backend.mirrors)
    timings: dict[str, float] = {}
    started = time.monotonic()
    try:
        env = backend.start(instance, recipe, rebuild=rebuild)
        timings["environment"] = time.monotonic() - started
        validation = _check(instance, recipe, env, store, timings, boundary,
                            test_timeout or DEFAULT_TEST_TIMEOUT)
    except HarnessError as exc:
        validation = Validation(instance.instance_id, ValidationStatus.ERROR,
                                [f"harness fault: {exc}"])
    validation = replace(validation, checks={
        **validation.checks, "seconds": {k: round(v, 2) for k, v in timings.items()}})
    validations.keep(store, backend.name, validation)
    return validation


def _check(instance: Instance, recipe: Recipe, env: Environment, store: Store,
           timings: dict[str, float], boundary: Snapshot | None,
           timeout: float) -> Validation:
    base = snapshots.at_base(env, instance.base_commit)

    logs = functools.partial(validations.test_log, store, instance.instance_id)
    mark = time.monotonic()
    env.restore(base)
    before = run_tests(env, instance, recipe, logs("test_patch_only.log"), timeout)
    timings["tests_without_fix"] = time.monotonic() - mark

    mark = time.monotonic()
    env.restore(base)
    apply_patch(env, instance.patch, "gold patch", instance)
    after = run_tests(env, instance, recipe, logs("gold.log"), timeout)
    timings["tests_with_gold"] = time.monotonic() - mark

    if boundary is not None:
        snapshot = boundary
    else:
        env.exec(f"echo probe > {shlex.quote(PROBE_FILE)}")
        snapshot = env.snapshot()
    mark = time.monotonic()
    identical, why = check_restore(env, snapshot)
    timings["restore_twice"] = time.monotonic() - mark
    env.restore(base)

    checks = {"real_repair": not before.fail_to_pass.get("success", []),
              "solvable": after.resolved, "restore_identical": identical,
              "without_fix": _summary(before), "with_gold": _summary(after),
              "snapshot": snapshot.fingerprint}
    if after.timed_out:
        return Validation(instance.instance_id, ValidationStatus.ERROR, [
            f"harness fault: the tests timed out after {timeout:g} s with the gold patch (the "
            "validated tests must finish: give a larger --test-timeout, to a sweep with another "
            "--run, or none)"], checks)
    reasons = []
    passing_before = before.fail_to_pass.get("success", [])
    if passing_before:
        reasons.append(f"not a real repair: {len(passing_before)} FAIL_TO_PASS test(s) pass "
                       f"without the fix, e.g. {passing_before[0]}")
    if not after.resolved:
        failing = after.fail_to_pass.get("failure", []) + after.pass_to_pass.get("failure", [])
        example = f", e.g. {failing[0]}" if failing else ""
        reasons.append(f"not solvable: the gold patch leaves {len(failing)} test(s) "
                       f"failing{example}" if after.tests_ran else
                       "not solvable: the tests did not run with the gold patch")
    if not identical:
        reasons.append(f"restore is not reproducible: {why}")
    status = ValidationStatus.EXCLUDED if reasons else ValidationStatus.VALID
    return Validation(instance.instance_id, status, reasons, checks)


def preflight(instances: Iterable[Instance], mirrors: Path | None = None) -> None:
    """Check what needs no environment first (recipes, interpreters), so bad input costs nothing.
    `mirrors` is where recipes read the repository files their specs name (then cached)."""
    from replay.environments.interpreters import find_python

    for version in sorted({load_recipe(instance, mirrors=mirrors).python
                           for instance in instances}):
        find_python(version)


def validate_all(instances: Iterable[Instance], backend: Backend, store: Store,
                 boundary: Callable[[Instance], Snapshot | None],
                 rebuild: bool = False,
                 test_timeout: float | None = None) -> Iterator[Validation]:
    """Validate instances one by one, yielding each verdict once it is recorded; `boundary`
    gives an instance's history snapshot (see `validate_instance`)."""
    for instance in instances:
        yield validate_instance(instance, backend, store, rebuild, boundary(instance),
                                test_timeout=test_timeout)
