"""Continuation traces as steps, PRE and POST aligned step by step, and where they part.

A step is one model response with the tool calls it made (see `replay.agent.loop`). PRE and POST
are aligned by step number. They diverge at the first step where their actions differ, in the
first way found, action by action in order:

- `different action`: another tool, one more or one fewer call, another bash command or other
  arguments, or one side has stopped;
- `different file`: the same tool on another file;
- `different edit`: the same edit tool on the same file with other text.

What the model wrote beside its calls, and the text of `finish`, do not count.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

EDIT_TOOLS = ("write_file", "edit_file")
FILE_TOOLS = ("read_file", *EDIT_TOOLS)


@dataclass
class ActionView:
    """One tool call of a step, with what it produced and, for edits, the diff."""

    tool: str
    arguments: dict[str, Any]
    output: str
    exit_code: int
    error: bool = False
    diff: list[tuple[str, str]] = field(default_factory=list)

    @property
    def target(self) -> str:
        """The file of a file tool, the command of bash, else ''."""
        if self.tool == "bash":
            return str(self.arguments.get("command", ""))
        return str(self.arguments.get("path", "")) if self.tool in FILE_TOOLS else ""

    @property
    def output_lines(self) -> int:
        return len(self.output.splitlines())


@dataclass
class Step:
    """One model response of a continuation and the actions it ran."""

    number: int
    text: str = ""
    actions: list[ActionView] = field(default_factory=list)


@dataclass(frozen=True)
class Divergence:
    """The first step where PRE and POST part, how, and a line saying what each did."""

    step: int
    kind: str
    detail: str


def steps_of(trace: dict[str, Any]) -> list[Step]:
    """The steps of a saved trace (`Trace.to_dict()`), with each step's text and actions."""
    messages = trace.get("messages") or []
    replies = [m for m in messages[trace.get("start_index", 0):] if m.get("role") == "assistant"]
    steps = [Step(number, _text(reply.get("content")))
             for number, reply in enumerate(replies, start=1)]
    for action in trace.get("actions") or []:
        number = int(action.get("step", 0))
        while len(steps) < number:
            steps.append(Step(len(steps) + 1))
        if number >= 1:
            steps[number - 1].actions.append(_action(action))
    return steps


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _action(action: dict[str, Any]) -> ActionView:
    arguments = action.get("arguments")
    view = ActionView(str(action.get("tool", "")),
                      arguments if isinstance(arguments, dict) else {},
                      str(action.get("output", "")), int(action.get("exit_code", 0)),
                      bool(action.get("error", False)))
    view.diff = edit_diff(view.tool, view.arguments)
    return view


def edit_diff(tool: str, arguments: dict[str, Any]) -> list[tuple[str, str]]:
    """An edit as diff lines `(kind, text)`, kind one of head, hunk, add, del, same; [] for a
    call that is not an edit."""
    path = str(arguments.get("path", ""))
    if tool == "edit_file":
        old, new = str(arguments.get("old", "")), str(arguments.get("new", ""))
        lines = difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}",
                                     f"b/{path}", lineterm="")
    elif tool == "write_file":
        content = str(arguments.get("content", "")).splitlines()
        lines = iter([f"+++ {path} (whole file)", f"@@ {len(content)} lines @@",
                      *(f"+{line}" for line in content)])
    else:
        return []
    return [(_line_kind(line), line) for line in lines]


def _line_kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "head"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "same")


def align(pre: list[Step], post: list[Step]) -> list[tuple[int, Step | None, Step | None]]:
    """Rows of (step number, PRE step, POST step), as many as the longer side has."""
    return [(number, _at(pre, number), _at(post, number))
            for number in range(1, max(len(pre), len(post)) + 1)]


def _at(steps: list[Step], number: int) -> Step | None:
    return steps[number - 1] if number <= len(steps) else None


def first_divergence(pre: list[Step], post: list[Step]) -> Divergence | None:
    """The first step where the two sides' actions differ (see the module docstring)."""
    for number, left, right in align(pre, post):
        if left is None or right is None:
            stopped, other = ("PRE", "POST") if left is None else ("POST", "PRE")
            return Divergence(number, "different action",
                              f"{stopped} had stopped; {other} went on")
        found = _step_difference(left, right)
        if found is not None:
            return Divergence(number, *found)
    return None


def _step_difference(left: Step, right: Step) -> tuple[str, str] | None:
    for index in range(max(len(left.actions), len(right.actions))):
        if index >= len(left.actions) or index >= len(right.actions):
            return ("different action", f"PRE made {len(left.actions)} call(s), POST "
                                        f"{len(right.actions)}")
        found = _action_difference(left.actions[index], right.actions[index])
        if found is not None:
            return found
    return None


def _action_difference(a: ActionView, b: ActionView) -> tuple[str, str] | None:
    if a.tool != b.tool:
        return "different action", f"PRE called {a.tool}, POST {b.tool}"
    if a.tool == "finish":
        return None
    if a.tool in FILE_TOOLS and a.target != b.target:
        return "different file", f"{a.tool}: PRE {a.target}, POST {b.target}"
    if a.tool == "bash" and a.target != b.target:
        return "different action", "bash: PRE and POST ran different commands"
    if a.arguments == b.arguments:
        return None
    if a.tool in EDIT_TOOLS:
        return "different edit", f"{a.tool} {a.target}: PRE and POST wrote different text"
    return "different action", f"{a.tool}: different arguments"
