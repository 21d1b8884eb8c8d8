"""Build the probe panel (instances/probe-panel/) and the demo suite's probe files.

For each task: write its fixture tree and commit it reproducibly (the base commit); take the gold
and test patches from git; run Phase A in the task's own environment with a scripted agent, whose
commands really run through the local backend at /testbed with a snapshot after every step; cut
the history at the boundary (the trajectory goes on to apply the fix and must resolve the
instance); write probes.json naming that history; check that every expected fact is shown by a
tool output and by nothing else (the task, the agent's words and calls), that each primary fact
sits in an output of at least 2,000 characters and that a control's outputs stay short.

    .venv/bin/python scripts/build_probe_panel.py            # (re)build the committed files
    .venv/bin/python scripts/build_probe_panel.py --check    # rebuild elsewhere, compare
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from panel_controls import envvar, port, version
from panel_demo import DEMO_PROBES
from panel_files import configdrift, grepsites, lockfile, pytestlog
from panel_fixtures import Task
from panel_logs import buildlog, incident, serverlog

from replay import api
from replay.api.blocks import (
    DIFF_FILE,
    HISTORY_FILE,
    PROBES_FILE,
    AgentConfig,
    History,
    LocalBackend,
    ProbeSet,
    Script,
    ScriptedModel,
    Store,
    bundled_history,
    collect_trajectory,
    commit_files,
    cut_history,
    evidence_problems,
    git,
    history_record,
    instances_dir,
    load_instance_dir,
    parse_rule,
)

TASKS = [buildlog, serverlog, incident, configdrift, pytestlog, lockfile, grepsites,
         version, port, envvar]
AGENT = "scripted-phase-a"
PRIMARY_OUTPUT = 2_000
DESCRIPTION = (
    "Ten evidence-retention tasks written for this project, in the shape of the study's panel: "
    "a small repository whose issue needs facts that only command outputs show, a Phase A "
    "history of a scripted agent running real commands on the fixture tree, stopped before any "
    "edit, and probes asking for those facts as strict JSON. Built by "
    "scripts/build_probe_panel.py. Each is also a real repair (gold patch, FAIL_TO_PASS), so "
    "sweeps run on it too.")
RULE = (
    "Cohorts fixed in each probes.json. primary (7): facts inside tool outputs of at least "
    "2,000 characters: a noisy build log with one error line, a server log with one error, an "
    "incident across three logs, two settings dumps, a verbose test run, a dependency check, a "
    "61-line search. control (3): short fixtures, every output under 2,000 characters in all.")


def patch_of(base: Path, changed: dict[str, str], scratch: Path) -> str:
    """The diff that turns the committed tree `base` into one with `changed` files."""
    repo = scratch / "patch"
    shutil.rmtree(repo, ignore_errors=True)
    commit_files(base, repo)
    for name, text in changed.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git("add", "-A", cwd=repo)
    return git("diff", "--cached", cwd=repo).stdout


def write_instance(task: Task, folder: Path, scratch: Path) -> None:
    """The fixture tree and instance.json of `task` under `folder`."""
    shutil.rmtree(folder, ignore_errors=True)
    for name, text in task.files.items():
        path = folder / "repo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    base = commit_files(folder / "repo", scratch / "base")
    shutil.rmtree(scratch / "base")
    record = {"repo": f"replay-panel/{task.name}", "instance_id": task.instance_id,
              "base_commit": base, "patch": patch_of(folder / "repo", task.fixed, scratch),
              "test_patch": patch_of(folder / "repo", task.tests, scratch),
              "problem_statement": task.problem, "version": task.version,
              "FAIL_TO_PASS": task.fail_to_pass, "PASS_TO_PASS": task.pass_to_pass,
              "environment_setup_commit": base}
    (folder / "instance.json").write_text(json.dumps(record, indent=2) + "\n")


def phase_a(task: Task, folder: Path, store: Store, backend: LocalBackend) -> History:
    """Run the task's scripted agent for real and cut its history at the boundary."""
    instance = load_instance_dir(folder)
    model = ScriptedModel(Script([*task.steps, *task.fix_turns()]))
    config = AgentConfig(max_steps=len(task.steps) + 3)
    collected = collect_trajectory(instance, backend, model, AGENT, AGENT, config, store)
    trajectory = collected.trajectory
    if trajectory is None or trajectory.resolved is not True:
        raise SystemExit(f"{task.instance_id}: Phase A did not resolve the instance "
                         f"({collected.error or 'tests fail'})")
    history = cut_history(trajectory, parse_rule(f"steps:{len(task.steps)}"))
    return history.model_copy(update={
        "boundary": history.boundary.model_copy(update={"reason": task.reason})})


def write_history(history: History, folder: Path) -> None:
    (folder / DIFF_FILE).write_bytes(history.snapshot.diff)
    text = json.dumps(history_record(history), indent=2, ensure_ascii=False)
    (folder / HISTORY_FILE).write_text(text + "\n", encoding="utf-8")


def write_probes(instance_id: str, history: History, cohort: str, probes: list[dict[str, Any]],
                 folder: Path) -> ProbeSet:
    """probes.json beside a history, checked against it; returns the checked set."""
    found = ProbeSet.model_validate({"instance_id": instance_id, "history": history.content_id(),
                                     "cohort": cohort, "probes": probes})
    problems = evidence_problems(found, history) + shape_problems(found, history)
    if problems:
        raise SystemExit("\n".join(problems))
    text = json.dumps(found.model_dump(mode="json", exclude_defaults=True), indent=2)
    (folder / PROBES_FILE).write_text(text + "\n", encoding="utf-8")
    return found


def shape_problems(found: ProbeSet, history: History) -> list[str]:
    """A primary fact outside every long output, or a control with long outputs."""
    outputs = [str(m.get("content") or "") for m in history.messages if m.get("role") == "tool"]
    if found.cohort == "control":
        total = sum(map(len, outputs))
        return [] if total < PRIMARY_OUTPUT else [f"{found.instance_id}: {total} characters"]
    if found.cohort != "primary":
        return []
    long = [text for text in outputs if len(text) >= PRIMARY_OUTPUT]
    return [f"{found.instance_id} {probe.id}.{name}: not in an output of 2,000+ characters"
            for probe in found.probes for name, value in probe.expected.items()
            if isinstance(value, str) and not any(value in text for text in long)]


def build(target: Path, demo: Path) -> None:
    """Build the panel into `target` and the demo probes into `demo`."""
    target.mkdir(parents=True, exist_ok=True)
    tasks = [make() for make in TASKS]
    with tempfile.TemporaryDirectory() as scratch, Store.open(Path(scratch) / "r.db") as store:
        backend = LocalBackend(root=Path(scratch) / "envs")  # fresh: base commits change
        for task in tasks:
            folder = target / task.instance_id
            write_instance(task, folder, Path(scratch))
            history = phase_a(task, folder, store, backend)
            write_history(history, folder)
            write_probes(task.instance_id, history, task.cohort, task.probes, folder)
            print(f"built {task.instance_id}: {len(history.messages)} messages, "
                  f"{history.boundary.tokens} tokens at step {history.boundary.step}")
    ids = ", ".join(json.dumps(task.instance_id) for task in tasks)
    (target / "suite.toml").write_text(f"description = {json.dumps(DESCRIPTION)}\n"
                                       f"rule = {json.dumps(RULE)}\ninstances = [{ids}]\n")
    for instance in api.instances("demo"):
        history = bundled_history(instance)
        if history is None:
            raise SystemExit(f"{instance.instance_id} has no bundled history")
        folder = demo / instance.instance_id
        folder.mkdir(parents=True, exist_ok=True)
        write_probes(instance.instance_id, history, "demo", DEMO_PROBES[instance.instance_id],
                     folder)


def check() -> int:
    """Rebuild in a scratch folder; 0 when every committed file is the same."""
    with tempfile.TemporaryDirectory() as scratch:
        build(Path(scratch) / "probe-panel", Path(scratch) / "demo")
        differ = _differences(Path(scratch) / "probe-panel", instances_dir() / "probe-panel")
        for instance in api.instances("demo"):
            name = f"{instance.instance_id}/{PROBES_FILE}"
            if not filecmp.cmp(Path(scratch, "demo", name), instances_dir() / "demo" / name,
                               shallow=False):
                differ.append(f"demo/{name}")
    print("\n".join(f"differs: {name}" for name in differ) or "the panel rebuilds identically")
    return 1 if differ else 0


def _differences(built: Path, committed: Path) -> list[str]:
    listed = subprocess.run(["diff", "-rq", str(built), str(committed)], capture_output=True,
                            text=True)
    return [line for line in listed.stdout.splitlines() if "__pycache__" not in line]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rebuild elsewhere and compare")
    if parser.parse_args(argv).check:
        return check()
    build(instances_dir() / "probe-panel", instances_dir() / "demo")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
