"""The shape every task of the Hermes evidence-retention panel shares, and where each came from.

Each task is a small workspace rebuilt from a public Hermes agent eval fixture (the same planted
facts, written by this project's own generator; the upstream files are named in its provenance,
never copied) or, for the two tasks with no public source, rebuilt from the study's description.
The issue asks the agent to find the facts and record them in `findings.py`; Phase A reads
(real commands, nothing written) and stops before that edit, so the facts are in the history's
tool outputs only. The gold patch writes `findings.py`, the test patch checks it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from panel_fixtures import GITIGNORE, Task, bash, field_spec, pyproject, turn

LICENSE = "MIT"
HERMES = "NousResearch/hermes-agent"
FORK = "zons-zhaozhy/hermes-agent"
READTOOL = (FORK, "6214afa300cc97df5e4e7ba505e330072f591aa4", "evals/readtool/fixtures.py")
DEFERRAL = (FORK, "303df6af90666633247d5e92e3c502a740eebf7c", "evals/core_tool_deferral/tasks.py")
ABEVAL = (FORK, "6214afa300cc97df5e4e7ba505e330072f591aa4", "scripts/toolperf_abeval/ab_eval.py")
ASK = ("Record what you find in findings.py at the root of the repository, as a dict named "
       "FACTS whose keys are: {keys}.")
LAYOUT_TEST = ("from pathlib import Path\n\n\ndef test_workspace_present():\n"
               "    assert Path('pyproject.toml').is_file()\n")


@dataclass(frozen=True)
class Source:
    """Where a task's fixture comes from: an upstream file (repository, commit, path) and its
    task there, or `rebuilt` with no public source; `note` says what was changed (scaled);
    `planted` names, per field, the upstream ground truth its expected value is (a constant of
    the fixture, or what its grader checks); the other fields read the fixture's content."""

    upstream_task: str
    where: tuple[str, str, str] | None = None
    note: str = ""
    planted: dict[str, str] = field(default_factory=dict)

    def record(self, name: str, cohort: str) -> dict[str, Any]:
        """provenance.json of the task."""
        if self.where is None:
            return {"task": name, "cohort": cohort, "rebuilt": True,
                    "source": None, "note": self.note}
        repository, commit, path = self.where
        return {"task": name, "cohort": cohort, "rebuilt": False,
                "source": {"repository": repository, "commit": commit, "path": path,
                           "license": LICENSE, "upstream_repository": HERMES,
                           "upstream_task": self.upstream_task},
                "planted": self.planted, "note": self.note}

    def whose(self, name: str) -> str:
        """Whose the expected value of field `name` is, in a few words."""
        if self.where is None:
            return "rebuild"
        if name in self.planted:
            return f"planted: {self.planted[name]}"
        return "content"


@dataclass
class PanelTask(Task):
    """A panel task with its provenance; ids are `hermes-panel__NAME-1`."""

    source: Source | None = None

    @property
    def instance_id(self) -> str:
        return f"hermes-panel__{self.name.replace('_', '-')}-1"


def fact_task(name: str, cohort: str, problem: str, files: dict[str, str],
              steps: list[dict[str, Any]], fields: dict[str, tuple[str, str]],
              expected: dict[str, Any], source: Source, question: str = "") -> PanelTask:
    """A task whose repair is recording `expected` (the facts the reads show) in findings.py."""
    keys = ", ".join(fields)
    findings = f"FACTS = {expected!r}\n"
    test = (f"{LAYOUT_TEST}\n\ndef test_findings():\n    import findings\n\n"
            f"    assert findings.FACTS == {expected!r}\n")
    workspace = {".gitignore": GITIGNORE, "pyproject.toml": pyproject(name.replace("_", "-"),
                                                                       "Evidence workspace"),
                 "tests/test_findings.py": LAYOUT_TEST, **files}
    specs = {key: field_spec(kind, text, order_free=False) for key, (kind, text) in
             fields.items()}
    return PanelTask(
        name=name, cohort=cohort, problem=f"{problem} {ASK.format(keys=keys)}", files=workspace,
        fixed={"findings.py": findings}, tests={"tests/test_findings.py": test},
        fail_to_pass=["tests/test_findings.py::test_findings"],
        pass_to_pass=["tests/test_findings.py::test_workspace_present"], steps=steps,
        reason="the evidence read, findings.py not written yet",
        probes=[{"id": name.replace("_", "-"), "question": question or problem,
                 "fields": specs, "expected": expected}],
        source=source)


@dataclass(frozen=True)
class Read:
    """A task's workspace of one file and the one command Phase A reads it with (`cat PATH`
    unless `command` says otherwise), after a short remark."""

    path: str
    text: str
    remark: str
    command: str = ""

    def step(self) -> dict[str, Any]:
        """The Phase A turn that reads the file."""
        return turn(self.remark, bash(self.command or f"cat {self.path}"))


def read_task(name: str, cohort: str, problem: str, read: Read, fields: dict[str, tuple[str, str]],
              expected: dict[str, Any], source: Source) -> PanelTask:
    """A `fact_task` whose evidence is one file read by one command."""
    return fact_task(name, cohort, problem, {read.path: read.text}, [read.step()], fields,
                     expected, source)


def planted_lines(total: int, at: int, planted: str, noise: Callable[[int], str]) -> str:
    """`total` lines of `noise(i)` with `planted` in place of line `at` (noise is not drawn
    for it)."""
    return "\n".join(planted if i == at else noise(i) for i in range(total)) + "\n"
