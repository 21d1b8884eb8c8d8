"""Build the ReMe fourteen-task panel (instances/reme/): the study's tasks, queries and facts.

For each task, in the study's table order: write its source snapshot and commit it
reproducibly; run the read-only investigation agent for real through the local backend (its
read_file calls, and one read-only listing where a path is itself a fact, read the immutable
snapshot; nothing is written before the boundary, no report is made); cut the history at the
boundary (the trajectory then records the facts in findings.py and must resolve the instance);
check the history (no file changed, only reads, every expected fact in a tool output, no
expected value in the agent's words, the cohort's size rule); write probes.json and
provenance.json.

    .venv/bin/python scripts/build_reme.py            # (re)build the committed files
    .venv/bin/python scripts/build_reme.py --check    # rebuild elsewhere, compare
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from build_probe_panel import _differences, phase_a, write_history, write_instance
from reme_controls import controls
from reme_panel import LISTING, ReMeTask
from reme_primary import PRIMARY_TASKS

from replay.api.blocks import PROBES_FILE, History, LocalBackend, ProbeSet, Store, instances_dir
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


def history_problems(task: ReMeTask, history: History) -> list[str]:
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


def write_probes(task: ReMeTask, history: History, folder: Path) -> None:
    """probes.json beside the history, checked against it."""
    found = ProbeSet.model_validate({"instance_id": task.instance_id,
                                     "history": history.content_id(), "cohort": task.cohort,
                                     "probes": task.probes})
    problems = history_problems(task, history)
    if problems:
        raise SystemExit("\n".join(problems))
    text = json.dumps(found.model_dump(mode="json", exclude_defaults=True), indent=2)
    (folder / PROBES_FILE).write_text(text + "\n", encoding="utf-8")


def build(target: Path) -> None:
    """Build the panel into `target`."""
    target.mkdir(parents=True, exist_ok=True)
    made = tasks()
    with tempfile.TemporaryDirectory() as scratch, Store.open(Path(scratch) / "r.db") as store:
        backend = LocalBackend(root=Path(scratch) / "envs")
        try:
            for task in made:
                build_task(task, target / task.instance_id, Path(scratch), store, backend)
        finally:
            backend.close()  # its slots' mounts go before the scratch folder does
    ids = ", ".join(json.dumps(task.instance_id) for task in made)
    (target / "suite.toml").write_text(f"description = {json.dumps(DESCRIPTION)}\n"
                                       f"rule = {json.dumps(RULE)}\ninstances = [{ids}]\n")


def build_task(task: ReMeTask, folder: Path, scratch: Path, store: Store,
               backend: LocalBackend) -> None:
    """Build one task's files into `folder`: instance, history, probes, provenance."""
    write_instance(task, folder, scratch)
    record: dict[str, Any] = json.loads((folder / "instance.json").read_text())
    record["repo"] = f"replay-panel/reme-{task.name.replace('_', '-')}"
    (folder / "instance.json").write_text(json.dumps(record, indent=2) + "\n")
    history = phase_a(task, folder, store, backend)
    write_history(history, folder)
    write_probes(task, history, folder)
    provenance = json.dumps(task.provenance(), indent=2, ensure_ascii=False)
    (folder / "provenance.json").write_text(provenance + "\n", encoding="utf-8")
    print(f"built {task.instance_id}: {len(history.messages)} messages, "
          f"{history.boundary.tokens} tokens at step {history.boundary.step}")


def check() -> int:
    """Rebuild in a scratch folder; 0 when every committed file is the same."""
    with tempfile.TemporaryDirectory() as scratch:
        build(Path(scratch) / SUITE)
        differ = _differences(Path(scratch) / SUITE, instances_dir() / SUITE)
    print("\n".join(f"differs: {name}" for name in differ) or "the panel rebuilds identically")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rebuild elsewhere and compare")
    if parser.parse_args(argv).check:
        return check()
    build(instances_dir() / SUITE)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
