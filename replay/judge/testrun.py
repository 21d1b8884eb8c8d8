"""Run an instance's tests in the environment the agent used."""
from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from replay.core.errors import InputError
from replay.core.files import write_atomic
from replay.environments.base import Environment
from replay.environments.recipes import Recipe
from replay.instances.records import Instance
from replay.judge.grading import (
    APPLY_FAILED,
    END,
    EXIT_CODE,
    START,
    TIMED_OUT,
    grade_log,
    patch_files,
)
from replay.records.grade import DEFAULT_TEST_TIMEOUT, Grade

TEST_PATCH_PATH = ".git/replay-test.patch"
# Keeps a test log: given its text, writes it and returns where it is (the grade's `log_path`).
# The store gives one for the logs it keeps (`Spool.tests_log`, `validations.test_log`).
LogKeeper = Callable[[str], str]


def log_file(path: Path) -> LogKeeper:
    """Keep a test log in the file at `path` (a scratch file of the caller's), atomically."""
    return lambda text: str(write_atomic(path, text))


def row_test_command(instance: Instance) -> str | None:
    """The test command in the row's eval_script, between the output markers, if it has one."""
    lines = instance.eval_script.splitlines()
    try:
        start = lines.index(f": '{START}'")
        end = lines.index(f": '{END}'")
    except ValueError:
        return None
    return "\n".join(lines[start + 1:end])


def test_targets(instance: Instance) -> str:
    """What `{test_files}` stands for in a recipe's test command.

    The test targets the row's own command names after ` -- ` (as sphinx's tox commands do),
    else the files test_patch touches.
    """
    own = row_test_command(instance)
    if own and " -- " in own:
        return own.split(" -- ", 1)[1].strip()
    return " ".join(shlex.quote(name) for name in patch_files(instance.test_patch).all)


def resolve_test_command(instance: Instance, recipe: Recipe) -> str:
    """The recipe's test command, else the one in the row's eval_script between the markers."""
    if recipe.test_cmd:
        return recipe.test_cmd.replace("{test_files}", test_targets(instance))
    own = row_test_command(instance)
    if own is None:
        raise InputError(f"instance {instance.instance_id}: no test command in its eval_script "
                         f"and none in the recipe for {instance.repo} {instance.version}")
    return own


def eval_script(instance: Instance, recipe: Recipe) -> str:
    """The shell script the judge runs in /testbed with test_patch on its standard input: keep
    the patch (before anything else may read the input), reinstall, apply it, test, revert."""
    files = patch_files(instance.test_patch)
    base = shlex.quote(instance.base_commit)
    existing = " ".join(shlex.quote(name) for name in files.existing)
    created = " ".join(shlex.quote(name) for name in files.created)
    reset = []
    if existing:
        reset.append(f"git checkout -q {base} -- {existing}")
    if created:
        reset.append(f"rm -f {created}")
    lines = [f"cat > {TEST_PATCH_PATH}", recipe.reinstall or ":", *reset,
             f"git apply -v {TEST_PATCH_PATH} || {{ echo '{APPLY_FAILED}'; exit 1; }}",
             f"echo '{START}'", resolve_test_command(instance, recipe), "rc=$?", f"echo '{END}'",
             f'echo "{EXIT_CODE}: $rc"', *reset]
    return "\n".join(lines) + "\n"


def run_tests(env: Environment, instance: Instance, recipe: Recipe, keep_log: LogKeeper,
              timeout: float = DEFAULT_TEST_TIMEOUT) -> Grade:
    """Run the instance's tests on the environment's current tree, keep the log (`keep_log`),
    and grade it.

    The files test_patch touches are reset to the base commit before the patch is applied and
    again after the run; every other file stays as the agent left it.
    A run still going after `timeout` seconds is killed, its log ends with the TIMED_OUT line
    and its grade says `timed_out` (see `replay.judge.timeouts` for whose fault that is).
    Raises `EnvironmentFault` when the environment cannot run the script at all.
    """
    result = env.exec(eval_script(instance, recipe), timeout=timeout, output_limit=5_000_000,
                      input=instance.test_patch.encode())
    text = result.output + (f"\n{TIMED_OUT} after {timeout:g} s\n" if result.timed_out else "")
    return replace(grade_log(instance, text), log_path=keep_log(text), duration=result.duration,
                   timed_out=result.timed_out, timeout=timeout)

