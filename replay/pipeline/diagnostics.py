"""Protocol step 10: what one continuation did, read from its typed trace, and for POST how much
of the repair its summary kept.

Per continuation: steps and actions used, exit reason, tests run, files edited, explicit
`read_file` calls on files the Phase A history had already read (repeated reads), its tokens and
cost; for POST, whether the summary kept the gold patch's files and its new identifiers.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from replay.core.paths import TESTBED
from replay.core.vocab import ExitReason
from replay.judge.grading import patch_files
from replay.models.types import Message
from replay.records.summary import Summary
from replay.records.trace import Trace

TEST_COMMAND = re.compile(r"\b(pytest|py\.test|unittest|tox|nox|nosetests|runtests)\b"
                          r"|manage\.py\s+test|\bmake\s+test")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


def diagnose(trace: Trace, history: list[Message], summary: Summary | None,
             patch: str) -> dict[str, Any]:
    """Protocol step 10 for one continuation of `history`, from its trace (and for POST its
    summary, held against the gold `patch`)."""
    read_before = phase_a_reads(history)
    repeated = sum(1 for action in trace.actions if action.tool == "read_file"
                   and _path(action.arguments.get("path")) in read_before)
    tests = sum(1 for action in trace.actions if action.tool == "bash"
                and TEST_COMMAND.search(str(action.arguments.get("command", ""))))
    found: dict[str, Any] = {
        "steps": trace.steps, "actions": len(trace.actions), "exit_reason": trace.exit_reason,
        "repeated_reads": repeated, "tests_run": tests, "files_edited": trace.files_edited,
        "input_tokens": trace.input_tokens, "output_tokens": trace.output_tokens,
        "cost": trace.cost, "dialect": trace.dialect}
    if summary is not None:
        found["summary"] = summary_keeps(summary, patch)
    return found


def refused_diagnostics(exit_reason: ExitReason = ExitReason.REFUSED) -> dict[str, Any]:
    """The diagnostics of a POST that ran nothing: its summarizer request was refused, or its
    summary is invalid by its method's own rules (`ExitReason.INVALID_SUMMARY`)."""
    return {"steps": 0, "actions": 0, "exit_reason": exit_reason, "repeated_reads": 0,
            "tests_run": 0, "files_edited": [], "input_tokens": 0, "output_tokens": 0,
            "cost": 0.0}


def phase_a_reads(messages: list[Message]) -> set[str]:
    """The files the Phase A history read with `read_file`, as absolute paths."""
    paths = set()
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            if function.get("name") != "read_file":
                continue
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except (TypeError, ValueError):
                continue
            if isinstance(arguments, dict) and arguments.get("path"):
                paths.add(_path(arguments["path"]))
    return paths


def _path(path: object) -> str:
    return posixpath.normpath(posixpath.join(TESTBED, str(path)))


def summary_keeps(summary: Summary, patch: str) -> dict[str, Any]:
    """How much of the repair the summary kept: the gold patch's files and its new identifiers,
    with the summary's size and cost, and whether a reply was cut off by its output cap."""
    text = summary.text or "\n".join(str(m.get("content") or "") for m in summary.messages or [])
    files = patch_files(patch).all
    added, removed = set(), set()
    for line in patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added.update(IDENTIFIER.findall(line))
        elif line.startswith("-") and not line.startswith("---"):
            removed.update(IDENTIFIER.findall(line))
    tokens = sorted(added - removed)
    return {"chars": len(text), "input_tokens": summary.input_tokens,
            "output_tokens": summary.output_tokens, "cost": summary.cost,
            "target_files": [sum(1 for name in files if name in text), len(files)],
            "gold_tokens": [sum(1 for token in tokens if token in text), len(tokens)],
            "truncated": bool(summary.details.get("truncated"))}
