"""Scripted agent turns for the demo suite: a run that applies the fix, and one that does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

from replay.environments.repos import commit_files
from replay.instances.records import Instance
from replay.judge.grading import patch_files


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
