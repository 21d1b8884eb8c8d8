"""Scripted agent turns: for the demo suite, a run that applies the fix and one that does not;
for the tiny instance, a mini-swe-agent history and the agent that finishes it in text actions.

The mini-swe-agent history opens as mini-swe-agent v1 opens a task: the system message and
instance template of the real trajectory in fixtures/trajectories/real (README.md there names
its source), with the tiny instance's issue in place of the original one. It is stored as
imports store it: the bash action as a tool call, its observation in mini-swe-agent's wrapper.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from replay.environments.repos import commit_files
from replay.instances.records import Instance
from replay.judge.grading import patch_files
from replay.models.scripts import Script
from replay.records.history import History
from replay.records.snapshot import Snapshot

from conftest import bash_call
from paths import FIXTURES


def gold_files(instance: Instance, scratch: Path) -> dict[str, str]:
    """The files the gold patch changes, with their fixed contents."""
    repo = scratch / instance.instance_id
    commit_files(instance.repo_files, repo)
    subprocess.run(["git", "apply", "-"], input=instance.patch, text=True, cwd=repo, check=True)
    return {name: (repo / name).read_text() for name in patch_files(instance.patch).all}


def call(name: str, **arguments: object) -> dict:
    return {"function": {"name": name, "arguments": arguments}}


def fixing_turns(instance: Instance, scratch: Path) -> list[dict]:
    """Read a file, write the fix, run the tests, finish: the turns of an agent that succeeds."""
    files = gold_files(instance, scratch)
    first = next(iter(files))
    writes = [call("write_file", path=f"/testbed/{name}", content=text)
              for name, text in files.items()]
    return [
        {"content": "Let me look at the file again.",
         "tool_calls": [call("read_file", path=f"/testbed/{first}", start_line=1, end_line=40)]},
        {"content": "Now the fix.", "tool_calls": writes},
        {"content": "Checking.", "tool_calls": [call("bash", command="python -m pytest -q tests")]},
        {"content": "Done.", "tool_calls": [call("finish", summary="fixed")]},
    ]


def lost_turns() -> list[dict]:
    """An agent that lost the thread: it looks around, edits nothing useful, and finishes."""
    return [
        {"content": "I am not sure what I was doing.",
         "tool_calls": [call("bash", command="ls && git status --short")]},
        {"content": "Nothing seems needed.", "tool_calls": [call("finish", summary="nothing")]},
    ]


REAL_V1 = (FIXTURES / "trajectories" / "real"
           / "psf__requests-5414.mini-v1.traj.json")
PROVENANCE = {"repository": "gruckion/mini-swe-agent",
              "path": "swebench_results/20251118_gemini-3-pro-74pct/trajs/psf__requests-5414/"
                      "psf__requests-5414.traj.json",
              "commit": "d12a71affd95403b036b2bdbd827349b77bfffb9",
              "sha256": "6d83e2bcf6f8f8d5f3c76fb487109ebfd0f5dcb867b6f12155ba59f8851204f9",
              "model": "google/gemini-3-pro-preview", "license": "MIT"}
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"
FIX = "sed -i 's/side \\* side \\* side/side * side/' shapes/area.py"
AREA = ("def rectangle(width, height):\n    return width * height\n\n\n"
        "def square(side):\n    return side * side * side\n")


def mini_opening(problem_statement: str) -> list[dict]:
    """mini-swe-agent v1's system message and task message, for `problem_statement`."""
    real = json.loads(REAL_V1.read_text())["messages"]
    task = re.sub(r"(?s)(Consider the following PR description:\n).*?(\n</pr_description>)",
                  lambda match: match.group(1) + problem_statement + match.group(2),
                  real[1]["content"])
    return [{"role": "system", "content": real[0]["content"]}, {"role": "user", "content": task}]


def mini_history(instance_id: str, problem_statement: str, snapshot: Snapshot) -> History:
    """A one-step mini-swe-agent-text history (it read shapes/area.py), with provenance."""
    messages = [*mini_opening(problem_statement),
                {"role": "assistant", "content": "THOUGHT: Let me read the area module.",
                 "tool_calls": [bash_call("call_1", "cat shapes/area.py")]},
                {"role": "tool", "tool_call_id": "call_1",
                 "content": f"<returncode>0</returncode>\n<output>\n{AREA}</output>"}]
    return History(instance_id=instance_id, messages=messages,
                   boundary={"rule": "steps:1", "step": 1, "tokens": 900},
                   model="google/gemini-3-pro-preview", source="mini-swe-agent v1 (test)",
                   snapshot=snapshot, dialect="mini-swe-agent-text", provenance=PROVENANCE)


def text_turn(thought: str, command: str) -> dict:
    """A mini-swe-agent text reply: a thought and one bash block."""
    return {"content": f"THOUGHT: {thought}\n\n```bash\n{command}\n```"}


def mini_agent(model: str = "agent") -> list[Script]:
    """The agent in text actions, for requests that hold mini-swe-agent's instructions: once
    its fix ran (a command with no output), it submits; otherwise it fixes square()."""
    seen = ["COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]
    return [Script([text_turn("Submit.", SUBMIT)], model=model, contains="<output>\n</output>",
                   seen=seen),
            Script([text_turn("square() cubes; fix it.", FIX)], model=model, seen=seen)]
