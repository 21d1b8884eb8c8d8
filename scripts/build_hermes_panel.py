"""Build the Hermes evidence-retention panel (instances/hermes-panel/): the study's 14 tasks.

Twelve tasks rebuild public Hermes agent eval fixtures (MIT) with their planted facts; payment and
checkout_504 have no public source and are rebuilt from the study's description (marked
`rebuilt` in their provenance.json). For each: write the workspace and commit it reproducibly,
run Phase A for real through the local backend (a read-only investigation agent: its commands
read, nothing is written before the boundary; after it the trajectory records the facts and must
resolve the instance), cut the history at the boundary, and check every expected fact against
it (in a tool output and nowhere else; a primary's in an output of 2,000+ characters, a
control's outputs short), exactly as scripts/build_probe_panel.py does for the probe panel.

    .venv/bin/python scripts/build_hermes_panel.py            # (re)build the committed files
    .venv/bin/python scripts/build_hermes_panel.py --check    # rebuild elsewhere, compare
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from build_probe_panel import _differences, phase_a, write_history, write_instance, write_probes
from hermes_panel_base import PanelTask
from hermes_panel_controls import controls
from hermes_panel_primary import PRIMARY

from replay.api.blocks import LocalBackend, Store, instances_dir

SUITE = "hermes-panel"
PROVENANCE = "provenance.json"
DESCRIPTION = (
    "The evidence-retention study's 14-task panel (the seeds' ReMe panel): payment, "
    "checkout_504, server_error and build_token as primary candidates, ten controls. Twelve "
    "rebuild public Hermes agent eval fixtures (MIT; provenance.json in each folder names the "
    "repository, commit, path and licence); payment and checkout_504 have no public source and "
    "are rebuilt from the study's description. Built by scripts/build_hermes_panel.py.")
RULE = ("Cohorts fixed in each probes.json. primary (4): facts inside a tool output of at least "
        "2,000 characters. control (10): every output under 2,000 characters in all.")


FACTS = "FACTS.md"
FACTS_HEAD = """# The Hermes panel's expected facts

Written by scripts/build_hermes_panel.py from the task definitions; do not edit by hand.

The study lists its 14 tasks and their expected facts, but its text was not readable when this
panel was built: its wording ("S + Jev Top", "evidence retention", the checkout_504 and payment
tasks, figures such as 172/210) was searched for in the public pages, code, documentation and
issue indexes available here, with no match. So these facts are not the study's byte for byte.
Twelve tasks rebuild public Hermes agent eval fixtures (MIT; each provenance.json names the
repository, commit and path), and each fact below says whose it is: **planted**, the fixture's
own ground truth (an upstream constant, or the string or value its grader checks), the same
bytes; **content**, a value the fixture's files hold that replay's probe asks for; **rebuild**,
the two tasks with no public source (payment, checkout_504), whose facts are this rebuild's.

The study's two format corrections, as replay applies them: payment's mapping is asked as the
routing table writes it (the region as the log's `region=`, the account of that region's one
entry in `config/providers.yaml`); the meeting notes' items are expected without their list
markers (the file keeps its `- ` markers, as upstream; NOTES_BULLET_3 has none).

| task | cohort | field | expected | whose |
|---|---|---|---|---|
"""


def facts_text(made: list[PanelTask]) -> str:
    """FACTS.md: every task's expected facts and whose each is."""
    rows = []
    for task in made:
        assert task.source is not None
        for probe in task.probes:
            for name, value in probe["expected"].items():
                rows.append(f"| {task.name} | {task.cohort} | {name} | `{json.dumps(value)}` | "
                            f"{task.source.whose(name)} |")
    return FACTS_HEAD + "\n".join(rows) + "\n"


def tasks() -> list[PanelTask]:
    """The 14 tasks in the study's order."""
    return [make() for make in PRIMARY] + controls()


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
    (target / FACTS).write_text(facts_text(made))
    ids = ", ".join(json.dumps(task.instance_id) for task in made)
    (target / "suite.toml").write_text(f"description = {json.dumps(DESCRIPTION)}\n"
                                       f"rule = {json.dumps(RULE)}\ninstances = [{ids}]\n")


def build_task(task: PanelTask, folder: Path, scratch: Path, store: Store,
               backend: LocalBackend) -> None:
    """Build one task's files into `folder`: instance, history, probes, provenance."""
    write_instance(task, folder, scratch)
    record = json.loads((folder / "instance.json").read_text())
    record["repo"] = f"replay-panel/hermes-{task.name}"  # environments/replay-panel.toml
    (folder / "instance.json").write_text(json.dumps(record, indent=2) + "\n")
    history = phase_a(task, folder, store, backend)
    write_history(history, folder)
    write_probes(task.instance_id, history, task.cohort, task.probes, folder)
    assert task.source is not None
    provenance = json.dumps(task.source.record(task.name, task.cohort), indent=2)
    (folder / PROVENANCE).write_text(provenance + "\n")
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
