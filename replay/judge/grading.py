"""Grading, pure: log text -> status map -> report -> resolved."""
from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass

from replay.instances.records import Instance
from replay.records.grade import Grade

START = ">>>>> Start Test Output"


END = ">>>>> End Test Output"


EXIT_CODE = ">>>>> Test Exit Code"


APPLY_FAILED = ">>>>> Patch Apply Failed"


TIMED_OUT = ">>>>> Tests Timed Out"


@dataclass(frozen=True)
class PatchFiles:
    """The files a patch touches: those that exist before it, and those it creates."""

    existing: list[str]
    created: list[str]

    @property
    def all(self) -> list[str]:
        return self.existing + self.created


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

