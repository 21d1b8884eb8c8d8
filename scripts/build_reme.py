"""Build the ReMe fourteen-task panel (instances/reme/): the study's tasks, queries and facts.

Each task, in the study's table order, is built as panel_build.py says: its source snapshot is
the fixture tree, and its agent the read-only investigation agent (its read_file calls, and one
read-only listing where a path is itself a fact, read the immutable snapshot; nothing is written
before the boundary, no report is made; the trajectory then records the facts in findings.py and
must resolve the instance). The history is checked (no file changed, only reads, every expected
fact in a tool output, no expected value in the agent's words, the cohort's size rule) before
probes.json and provenance.json are written.

    .venv/bin/python scripts/build_reme.py            # (re)build the committed files
    .venv/bin/python scripts/build_reme.py --check    # rebuild elsewhere, compare
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from panel_build import build_suite, main
from reme_controls import controls
from reme_panel import LISTING, ReMeTask
from reme_primary import PRIMARY_TASKS

from replay.api.blocks import History, ProbeSet
from replay.compaction.transcript import call_arguments, message_text, tool_calls
from replay.measures.probes.files import leaves

SUITE = "reme"
ORDER = ["payment", "backup", "refactor", "three_files", "active_config", "checkout_504",
         "dependency_version", "retry_backoff", "server_error", "meeting_notes",
         "targeted_edit", "build_token", "package_versions", "checksum_anomaly"]
PRIMARY_CHARACTERS = 2_000
DESCRIPTION = (
    "The ReMe fourteen-task evidence-retention study (../shared/seeds/000_*.txt, STUDY.md of "
    "ReMe/benchmark/compaction): its initial queries, expected facts and cohorts. Primary (4): "
    "payment, checkout_504, server_error, build_token; ten controls. Twelve adapt public Hermes "
    "agent eval fixtures (MIT; provenance.json names repository, commit and path); payment and "
    "checkout_504 are rebuilt. Built by scripts/build_reme.py; see docs/reme.md.")
RULE = ("Cohorts as the study fixes them: primary candidates have at least 2,000 source-snapshot "
        "characters and evidence-dependent facts; controls are short fixtures or query-only.")


def tasks() -> list[ReMeTask]:
    """The 14 tasks in the study's table order."""
    by_name = {task.name: task for task in [*(make() for make in PRIMARY_TASKS), *controls()]}
    return [by_name[name] for name in ORDER]


def history_problems(task: ReMeTask, _found: ProbeSet, history: History) -> list[str]:
    """What makes a history unfit for the study: see the module docstring."""
    where, problems = task.instance_id, []
    if history.snapshot.diff:
        problems.append(f"{where}: the investigation changed files")
    calls = [c for m in history.messages for c in tool_calls(m)]
    for c in calls:
        name = c["function"]["name"]
        if name != "read_file" and not (name == "bash" and LISTING in call_arguments(c)):
            problems.append(f"{where}: a call that is not a read: {name}")
    tools = "\n".join(message_text(m) for m in history.messages if m.get("role") == "tool")
    agent = "\n".join(message_text(m) for m in history.messages if m.get("role") == "assistant")
    evidence = task.problem if task.study_cohort.endswith("query_only") else tools
    expected = task.probes[0]["expected"]
    for name, value in expected.items():
        for leaf in leaves(value):
            text = json.dumps(leaf) if isinstance(leaf, bool) else str(leaf)
            if name not in task.derived and text not in evidence:
                problems.append(f"{where} {name}: {text} is in no evidence")
            if isinstance(leaf, str) and len(leaf) > 3 and leaf in agent:
                problems.append(f"{where} {name}: {text} is in the agent's words")
    if task.probes[0]["question"] in agent + task.problem:
        problems.append(f"{where}: the follow-up entered the collection")
    size = task.snapshot_characters()
    if (task.cohort == "primary") != (size >= PRIMARY_CHARACTERS):
        problems.append(f"{where}: {task.cohort} with a {size}-character snapshot")
    return problems


def build(instances: Path) -> None:
    """Build the panel into `instances`/reme."""
    build_suite(tasks(), instances / SUITE, DESCRIPTION, RULE, history_problems)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], __doc__, build, [SUITE]))
