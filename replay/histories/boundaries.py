"""Compaction boundaries: where in a recorded trajectory a Phase A history stops.

A rule picks k, the number of steps (model responses with their tool calls) the history keeps;
the snapshot is the tree after step k. Rules:

- `steps:N`      after N steps.
- `tokens:N`     when the context reaches N tokens, as production agents trigger compaction: the
                 history is the context of the first request whose input reached N tokens.
- `fraction:F`   at fraction F (0 < F <= 1) of the complete trajectory, rounded to a step.
- `before-edit`  just before the step that first changes a non-test file of the repository.

A rule out of range (N < 1, F outside 0 < F <= 1) is bad input when it is parsed; one that
lands past the end of the trajectory, or before its first step, when it is cut.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from replay.core.errors import InputError
from replay.core.limits import MAX_STEPS, MAX_TOKENS

RULES = ("steps:N", "tokens:N", "fraction:F", "before-edit")
_TEST_PARTS = {"test", "tests", "testing"}


@dataclass(frozen=True)
class StepMark:
    """What the rules need to know about one step of a trajectory.

    `context_tokens`: the context after the step (the next request's input tokens);
    `edited`: the files of the base commit that the step changed.
    """

    context_tokens: int
    edited: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A parsed boundary rule; `text` is its canonical spelling (part of a history's identity)."""

    kind: str
    value: float = 0.0

    @property
    def text(self) -> str:
        """The rule as written on the command line, in one canonical spelling."""
        if self.kind == "before-edit":
            return self.kind
        if self.kind == "fraction":
            return f"fraction:{self.value:g}"
        return f"{self.kind}:{int(self.value)}"


def parse_rule(text: str) -> Rule:
    """Parse `steps:N`, `tokens:N`, `fraction:F` or `before-edit`; bad input otherwise."""
    text = text.strip()
    if text == "before-edit":
        return Rule("before-edit")
    kind, _, raw = text.partition(":")
    most = MAX_STEPS if kind == "steps" else MAX_TOKENS
    if kind in ("steps", "tokens") and re.fullmatch(r"\d{1,12}", raw) and 1 <= int(raw) <= most:
        return Rule(kind, int(raw))
    if kind == "fraction" and re.fullmatch(r"\d*\.?\d+", raw) and 0 < float(raw) <= 1:
        return Rule(kind, float(raw))
    raise InputError(f"bad boundary rule {text!r}: use {', '.join(RULES)} "
                     f"(N a positive integer, at most {MAX_STEPS} steps or {MAX_TOKENS} "
                     "tokens; 0 < F <= 1)")


def is_test_path(path: str) -> bool:
    """Whether a repository path is a test file (under a test folder, or named like one)."""
    parts = path.split("/")
    name = posixpath.basename(path)
    return (any(part in _TEST_PARTS for part in parts[:-1]) or name.startswith("test_")
            or name == "conftest.py" or bool(re.search(r"_tests?\.\w+$", name)))


def cut(rule: Rule, marks: Sequence[StepMark], opening_tokens: int) -> int:
    """The number of steps the history keeps under `rule` (1..len(marks)).

    `marks[i]` describes step i + 1; `opening_tokens` is the context of the first request.
    Raises `InputError` when the rule lands past the end or before the first step.
    """
    total = len(marks)
    if rule.kind == "steps":
        steps = int(rule.value)
    elif rule.kind == "fraction":
        steps = max(1, int(rule.value * total + 0.5))
    elif rule.kind == "tokens":
        steps = _tokens(rule, marks, opening_tokens)
    else:
        steps = _before_edit(marks)
    if steps > total:
        raise InputError(f"boundary {rule.text} is past the end of the trajectory "
                         f"({total} steps)")
    return steps


def _tokens(rule: Rule, marks: Sequence[StepMark], opening_tokens: int) -> int:
    if opening_tokens >= rule.value:
        raise InputError(f"boundary {rule.text} falls before the first step: the task alone "
                         f"is {opening_tokens} tokens")
    for index, mark in enumerate(marks, start=1):
        if mark.context_tokens >= rule.value:
            return index
    largest = marks[-1].context_tokens if marks else opening_tokens
    raise InputError(f"boundary {rule.text} is past the end of the trajectory: its context "
                     f"never reaches {int(rule.value)} tokens (at most {largest})")


def _before_edit(marks: Sequence[StepMark]) -> int:
    for index, mark in enumerate(marks, start=1):
        sources = [path for path in mark.edited if not is_test_path(path)]
        if sources and index == 1:
            raise InputError(f"boundary before-edit falls before the first step: step 1 "
                             f"already edits {sources[0]}")
        if sources:
            return index - 1
    raise InputError("boundary before-edit is past the end of the trajectory: no step edits "
                     "a non-test source file")
