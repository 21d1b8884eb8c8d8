"""Boundary rules cut a recorded trajectory at the step they promise, and refuse bad cuts."""

from __future__ import annotations

import re

import pytest

from replay.core.errors import InputError
from replay.histories.boundaries import StepMark, cut, is_test_path, parse_rule
from replay.histories.trajectories import edited_files

# Context after each step (the next request's input tokens) and the base files each step changed.
MARKS = [StepMark(1500), StepMark(2500, ("tests/test_money.py",)),
         StepMark(3500, ("tally/money.py",)), StepMark(4200)]
OPENING = 1000


@pytest.mark.parametrize(("rule", "steps"), [
    ("steps:2", 2), ("steps:4", 4), ("tokens:1500", 1), ("tokens:2501", 3), ("tokens:4200", 4),
    ("fraction:0.5", 2), ("fraction:0.1", 1), ("fraction:0.6", 2), ("fraction:1", 4),
    ("before-edit", 2),
])
def test_each_rule_keeps_the_steps_it_promises(rule: str, steps: int) -> None:
    assert cut(parse_rule(rule), MARKS, OPENING) == steps


@pytest.mark.parametrize(("rule", "message"), [
    ("steps:5", "boundary steps:5 is past the end of the trajectory (4 steps)"),
    ("tokens:5000", "never reaches 5000 tokens (at most 4200)"),
    ("tokens:900", "falls before the first step: the task alone is 1000 tokens"),
])
def test_a_cut_past_the_end_or_before_the_start_is_bad_input(rule: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        cut(parse_rule(rule), MARKS, OPENING)


def test_before_edit_needs_an_edit_of_a_source_file_after_the_first_step() -> None:
    only_tests = [StepMark(10, ("tests/test_money.py",)), StepMark(20, ("conftest.py",))]
    with pytest.raises(InputError, match="no step edits a non-test source file"):
        cut(parse_rule("before-edit"), only_tests, 1)
    with pytest.raises(InputError, match="step 1 already edits tally/money.py"):
        cut(parse_rule("before-edit"), [StepMark(10, ("tally/money.py",))], 1)


@pytest.mark.parametrize("text", ["steps:0", "steps:x", "tokens", "tokens:-3", "fraction:0",
                                  "fraction:1.5", "fraction:2", "after-edit", ""])
def test_a_malformed_rule_is_bad_input(text: str) -> None:
    with pytest.raises(InputError, match="bad boundary rule"):
        parse_rule(text)


def test_rules_have_one_spelling() -> None:
    assert parse_rule(" fraction:0.50 ").text == "fraction:0.5"
    assert parse_rule("tokens:0012").text == "tokens:12"
    assert parse_rule("before-edit").text == "before-edit"


@pytest.mark.parametrize(("path", "test"), [
    ("tests/test_money.py", True), ("src/pkg/tests/helpers.py", True), ("pkg/test_io.py", True),
    ("pkg/io_test.py", True), ("conftest.py", True), ("testing/util.py", True),
    ("tally/money.py", False), ("tally/contest.py", False), ("attestation.py", False),
])
def test_test_files_are_told_from_source_files(path: str, test: bool) -> None:
    assert is_test_path(path) is test


def _block(path: str, new: bool, body: str) -> bytes:
    mode = "new file mode 100644\n" if new else ""
    return (f"diff --git a/{path} b/{path}\n{mode}index 1..2\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1 +1 @@\n{body}\n").encode()


def test_a_step_edits_the_base_files_whose_diff_changed() -> None:
    before = _block("tally/money.py", False, "-a\n+b") + _block("scratch.py", True, "+x")
    after = (_block("tally/money.py", False, "-a\n+c") + _block("scratch.py", True, "+y")
             + _block("README.md", False, "-r\n+s"))
    assert edited_files(before, after) == ["README.md", "tally/money.py"]
    assert edited_files(after, after) == []
    assert edited_files(after, b"") == ["README.md", "tally/money.py"]
