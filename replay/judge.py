"""The judge: run an instance's tests in the environment the agent used, and grade them.

Grading is pure (log text -> status map -> report -> resolved) and reuses swebench's parsers and
grading functions, so a saved log can be graded again without any environment.
"""

from __future__ import annotations

import re
import shlex
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from replay.backends.base import Environment
from replay.errors import InputError
from replay.instances import Instance
from replay.recipes import Recipe

START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"
EXIT_CODE = ">>>>> Test Exit Code"
APPLY_FAILED = ">>>>> Patch Apply Failed"
TIMED_OUT = ">>>>> Tests Timed Out"
TEST_PATCH_PATH = ".git/replay-test.patch"
DEFAULT_TEST_TIMEOUT = 1800.0


@dataclass(frozen=True)
class PatchFiles:
    """The files a patch touches: those that exist before it, and those it creates."""

    existing: list[str]
    created: list[str]

    @property
    def all(self) -> list[str]:
        return self.existing + self.created


@dataclass
class Grade:
    """The verdict on one test run."""

    resolved: bool
    status: str
    tests_ran: bool
    statuses: dict[str, str] = field(default_factory=dict)
    fail_to_pass: dict[str, list[str]] = field(default_factory=dict)
    pass_to_pass: dict[str, list[str]] = field(default_factory=dict)
    log_path: str | None = None
    duration: float = 0.0
    timed_out: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def patch_files(patch: str) -> PatchFiles:
    """Parse the `diff --git` headers of a patch."""
    existing: list[str] = []
    created: list[str] = []
    for block in re.split(r"^diff --git ", patch, flags=re.M)[1:]:
        header = block.split("\n@@", 1)[0]
        match = re.match(r"a/(\S+) b/(\S+)", block)
        if not match:
            continue
        new_file = "\nnew file mode" in header or "\n--- /dev/null" in header
        (created if new_file else existing).append(match.group(2))
    return PatchFiles(existing, created)


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
    """The shell script the judge runs in /testbed: reinstall, apply test_patch, test, revert."""
    files = patch_files(instance.test_patch)
    base = shlex.quote(instance.base_commit)
    existing = " ".join(shlex.quote(name) for name in files.existing)
    created = " ".join(shlex.quote(name) for name in files.created)
    reset = []
    if existing:
        reset.append(f"git checkout -q {base} -- {existing}")
    if created:
        reset.append(f"rm -f {created}")
    lines = [recipe.reinstall or ":", *reset,
             f"git apply -v {TEST_PATCH_PATH} || {{ echo '{APPLY_FAILED}'; exit 1; }}",
             f"echo '{START}'", resolve_test_command(instance, recipe), "rc=$?", f"echo '{END}'",
             f'echo "{EXIT_CODE}: $rc"', *reset]
    return "\n".join(lines) + "\n"


def grade_log(instance: Instance, log_text: str) -> Grade:
    """Grade a saved test log against the instance's FAIL_TO_PASS and PASS_TO_PASS lists."""
    from swebench.harness.constants import FAIL_TO_PASS, PASS_TO_PASS, EvalType, ResolvedStatus
    from swebench.harness.grading import (
        get_eval_tests_report,
        get_logs_eval,
        get_resolution_status,
    )
    from swebench.types import TestSpec

    spec = TestSpec(instance_id=instance.instance_id, image="", eval_script_list=[],
                    repo=instance.repo, version=instance.version,
                    FAIL_TO_PASS=instance.FAIL_TO_PASS, PASS_TO_PASS=instance.PASS_TO_PASS,
                    log_parser=instance.log_parser, eval_type=instance.eval_type)
    with tempfile.NamedTemporaryFile("w", suffix=".log", encoding="utf-8") as handle:
        handle.write(log_text)
        handle.flush()
        statuses, ran = get_logs_eval(spec, handle.name)
    gold = {FAIL_TO_PASS: instance.FAIL_TO_PASS, PASS_TO_PASS: instance.PASS_TO_PASS}
    eval_type = EvalType.FAIL_ONLY if instance.eval_type == "fail_only" else EvalType.PASS_AND_FAIL
    report = get_eval_tests_report(statuses, gold, eval_type=eval_type)
    status = get_resolution_status(report) if ran else ResolvedStatus.NO.value
    return Grade(resolved=ran and status == ResolvedStatus.FULL.value, status=status,
                 tests_ran=ran, statuses=statuses, fail_to_pass=report[FAIL_TO_PASS],
                 pass_to_pass=report[PASS_TO_PASS])


def run_tests(env: Environment, instance: Instance, recipe: Recipe, log_path: Path,
              timeout: float = DEFAULT_TEST_TIMEOUT) -> Grade:
    """Run the instance's tests on the environment's current tree, save the log, and grade it.

    The files test_patch touches are reset to the base commit before the patch is applied and
    again after the run; every other file stays as the agent left it.
    Raises `EnvironmentFault` when the environment cannot run the script at all.
    """
    env.write_file(f"{env.workdir}/{TEST_PATCH_PATH}", instance.test_patch.encode())
    result = env.exec(eval_script(instance, recipe), timeout=timeout,
                      output_limit=5_000_000)
    text = result.output + (f"\n{TIMED_OUT}\n" if result.timed_out else "")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    partial = log_path.with_suffix(log_path.suffix + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(log_path)
    grade = grade_log(instance, text)
    grade.log_path = str(log_path)
    grade.duration = result.duration
    grade.timed_out = result.timed_out
    return grade
