"""What every task of the ReMe fourteen-task panel shares: its shape, its provenance, source views.

A task is the study's own: its initial query (the collection goal, verbatim), its expected facts
(byte for byte, type for type), its cohort. Its workspace is an immutable source snapshot: the
upstream fixture's files, rebuilt by this project's own code (the upstream files are named in
provenance.json, never copied), with long logs and build output as deterministic source views
(head and matching-line context, each line with its original number). The investigation agent
only calls read_file (and, where a path is itself a fact, one read-only listing) before the
boundary; after it the trajectory records the facts in findings.py and must resolve the instance,
so that the panel is also a real repair. The follow-up question and the expected values never
enter the workspace's task, the agent's words or its calls.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from panel_fixtures import GITIGNORE, Task, bash, call, field_spec, pyproject, turn

LICENSE = "MIT"
HERMES = "NousResearch/hermes-agent"
STUDY_COMMIT = "30463589eb54fa0f48724594cc0e98e6b995729b"
READTOOL = ("zons-zhaozhy/hermes-agent", "6214afa300cc97df5e4e7ba505e330072f591aa4",
            "evals/readtool/fixtures.py")
DEFERRAL = (HERMES, "271a8b09b189a8efe0bde4d4bcad0e11f4fe96c0",
            "evals/core_tool_deferral/tasks.py")
ABEVAL = (HERMES, "03382ede302d05c2a3f39fa8958a8a2d3a40a4f4", "scripts/toolperf_abeval/ab_eval.py")
PIN_NOTE = ("the study's pin 30463589 is not readable here (the upstream repository is too large "
            "to fetch and the search index holds this file at other commits only); this is the "
            "readable copy used")
SCAFFOLD = (".gitignore", "pyproject.toml", "tests/test_findings.py")
LAYOUT_TEST = ("from pathlib import Path\n\n\ndef test_workspace_present():\n"
               "    assert Path('pyproject.toml').is_file()\n")
LISTING = "find . -type f -not -path './.git/*' -not -path './tests/*' | sort"
FOLLOW_UP = ("Answer the initial task's follow-up from the investigation above: report the facts "
             "it established, exactly as the sources show them.")


@dataclass(frozen=True)
class Source:
    """Where a task comes from: an upstream file (repository, commit, path) and its task there,
    or `where=None` for a task rebuilt with no public source; `note` says what was adapted."""

    upstream_task: str
    where: tuple[str, str, str] | None
    note: str = ""

    def record(self) -> dict[str, Any]:
        """The `source` entry of provenance.json."""
        if self.where is None:
            return {"rebuilt": True, "upstream": None, "note": self.note}
        repository, commit, path = self.where
        return {"rebuilt": False, "upstream": {
            "repository": repository, "commit": commit, "path": path, "license": LICENSE,
            "upstream_repository": HERMES, "upstream_task": self.upstream_task,
            "study_commit": STUDY_COMMIT, "pin_note": PIN_NOTE}, "note": self.note}


@dataclass
class ReMeTask(Task):
    """A panel task with the study's cohort label, its provenance, and the fields whose value the
    sources show only as inputs (named with what shows them)."""

    study_cohort: str = ""
    source: Source | None = None
    derived: dict[str, str] = field(default_factory=dict)

    @property
    def instance_id(self) -> str:
        return f"reme__{self.name.replace('_', '-')}-1"

    @property
    def repo(self) -> str:
        """The repository instance.json names."""
        return f"replay-panel/reme-{self.name.replace('_', '-')}"

    def own_files(self) -> dict[str, str]:
        """provenance.json: cohort, source, derived fields and the snapshot's file hashes."""
        assert self.source is not None
        hashes = {path: hashlib.sha256(text.encode()).hexdigest()
                  for path, text in sorted(self.files.items()) if path not in SCAFFOLD}
        record = {"task": self.name, "study_cohort": self.study_cohort, "query": self.problem,
                  **self.source.record(), "derived_fields": self.derived,
                  "source_snapshot_characters": self.snapshot_characters(),
                  "source_sha256": hashes}
        return {"provenance.json": json.dumps(record, indent=2, ensure_ascii=False) + "\n"}

    def snapshot_characters(self) -> int:
        """The source snapshot's size in characters (the scaffold left out)."""
        return sum(len(text) for path, text in self.files.items() if path not in SCAFFOLD)


def cohort_of(study_cohort: str) -> str:
    """replay's cohort for the study's label: `primary` or `control`."""
    return "primary" if study_cohort == "Primary candidate" else "control"


def read(path: str, start: int | None = None, end: int | None = None) -> dict[str, Any]:
    """A read_file call (whole file, or lines start..end)."""
    arguments: dict[str, Any] = {"path": f"/testbed/{path}"}
    if start is not None:
        arguments |= {"start_line": start, "end_line": end}
    return call("read_file", **arguments)


def listing() -> dict[str, Any]:
    """The read-only listing of the workspace's files."""
    return bash(LISTING)


def reme_task(name: str, study_cohort: str, query: str, files: dict[str, str],
              steps: list[dict[str, Any]], fields: dict[str, tuple[str, str]],
              expected: dict[str, Any], source: Source, question: str = FOLLOW_UP,
              derived: dict[str, str] | None = None) -> ReMeTask:
    """A task whose collection goal is the study's `query`, investigated by `steps`."""
    findings = f"FACTS = {expected!r}\n"
    test = (f"{LAYOUT_TEST}\n\ndef test_findings():\n    import findings\n\n"
            f"    assert findings.FACTS == {expected!r}\n")
    workspace = {".gitignore": GITIGNORE, "pyproject.toml": pyproject(
        name.replace("_", "-"), "Evidence workspace"), "tests/test_findings.py": LAYOUT_TEST,
        **files}
    specs = {key: field_spec(kind, text, order_free=(name, key) == (
        "payment", "no_retry_http_statuses")) for key, (kind, text) in fields.items()}
    return ReMeTask(
        name=name, cohort=cohort_of(study_cohort), problem=query, files=workspace,
        fixed={"findings.py": findings}, tests={"tests/test_findings.py": test},
        fail_to_pass=["tests/test_findings.py::test_findings"],
        pass_to_pass=["tests/test_findings.py::test_workspace_present"], steps=steps,
        reason="the source evidence read; no report written yet",
        probes=[{"id": name.replace("_", "-"), "question": question, "fields": specs,
                 "expected": expected}],
        study_cohort=study_cohort, source=source, derived=derived or {})


def reads(remark: str, *calls: dict[str, Any]) -> dict[str, Any]:
    """One turn of the investigation agent: a remark (never a fact) and its read-only calls."""
    return turn(remark, *calls)


def source_view(name: str, lines: list[str], pattern: str, head: int, context: int) -> str:
    """A deterministic source view of a long log: its first `head` lines and `context` lines
    around every line matching `pattern`, each line with its original number."""
    matches = [i for i, line in enumerate(lines) if re.search(pattern, line)]
    keep = set(range(min(head, len(lines))))
    for i in matches:
        keep |= set(range(max(0, i - context), min(len(lines), i + context + 1)))
    out = [f"[source view of {name}: {len(lines):,} lines; the first {head} and {context} "
           f"around each of the {len(matches)} lines matching {pattern!r}; original line "
           "numbers]"]
    previous = -1
    for i in sorted(keep):
        if i != previous + 1:
            out.append(f"[... lines {previous + 2}-{i} not shown ...]")
        out.append(f"{i + 1}: {lines[i]}")
        previous = i
    if previous < len(lines) - 1:
        out.append(f"[... lines {previous + 2}-{len(lines)} not shown ...]")
    return "\n".join(out) + "\n"
