"""What the panel builders share: a task's instance, its Phase A history, its probes, the suite.

For each task of a panel: write its fixture tree and commit it reproducibly (the base commit);
take the gold and test patches from git; run Phase A in the task's own environment with a
scripted agent whose commands really run through the local backend at /testbed (a snapshot after
every step); cut the history at the task's boundary (the trajectory goes on to apply the fix and
must resolve the instance); write probes.json naming that history, refused when the panel's own
checks find a problem; write suite.toml. `check` rebuilds elsewhere and compares with the
committed files; `main` is a builder's command line (`--check` for that).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from panel_fixtures import Task

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
    collect_trajectory,
    commit_files,
    cut_history,
    git,
    history_record,
    instances_dir,
    load_instance_dir,
    parse_rule,
)

AGENT = "scripted-phase-a"

# What a panel finds wrong with a task's probes and history (nothing: an empty list).
Problems = Callable[[Task, ProbeSet, History], list[str]]


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
    record = {"repo": task.repo, "instance_id": task.instance_id,
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
    """The history's snapshot.diff and history.json in `folder`."""
    (folder / DIFF_FILE).write_bytes(history.snapshot.diff)
    text = json.dumps(history_record(history), indent=2, ensure_ascii=False)
    (folder / HISTORY_FILE).write_text(text + "\n", encoding="utf-8")


def probe_set(instance_id: str, history: History, cohort: str,
              probes: list[dict[str, Any]]) -> ProbeSet:
    """The probes of `instance_id` on `history`, validated."""
    return ProbeSet.model_validate({"instance_id": instance_id, "history": history.content_id(),
                                    "cohort": cohort, "probes": probes})


def write_probes(found: ProbeSet, problems: list[str], folder: Path) -> None:
    """probes.json in `folder`; stops the build with the `problems` when there are any."""
    if problems:
        raise SystemExit("\n".join(problems))
    text = json.dumps(found.model_dump(mode="json", exclude_defaults=True), indent=2)
    (folder / PROBES_FILE).write_text(text + "\n", encoding="utf-8")


def build_suite(tasks: Sequence[Task], target: Path, description: str, rule: str,
                problems: Problems) -> None:
    """Build every task into its folder under `target` (instance, history, probes and the
    task's own files), then suite.toml listing them in order."""
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, Store.open(Path(scratch) / "r.db") as store:
        backend = LocalBackend(root=Path(scratch) / "envs")  # fresh: base commits change
        try:
            for task in tasks:
                _build_task(task, target / task.instance_id, Path(scratch), store, backend,
                            problems)
        finally:
            backend.close()  # its slots' mounts go before the scratch folder does
    ids = ", ".join(json.dumps(task.instance_id) for task in tasks)
    (target / "suite.toml").write_text(f"description = {json.dumps(description)}\n"
                                       f"rule = {json.dumps(rule)}\ninstances = [{ids}]\n")


def _build_task(task: Task, folder: Path, scratch: Path, store: Store, backend: LocalBackend,
                problems: Problems) -> None:
    write_instance(task, folder, scratch)
    history = phase_a(task, folder, store, backend)
    write_history(history, folder)
    found = probe_set(task.instance_id, history, task.cohort, task.probes)
    write_probes(found, problems(task, found, history), folder)
    for name, text in task.own_files().items():
        (folder / name).write_text(text, encoding="utf-8")
    print(f"built {task.instance_id}: {len(history.messages)} messages, "
          f"{history.boundary.tokens} tokens at step {history.boundary.step}")


def check(build: Callable[[Path], None], suites: Sequence[str]) -> int:
    """Rebuild with `build` into a scratch folder (standing for instances/); 0 when each of the
    `suites` is the same as its committed folder and every other file built is the same as its
    committed copy."""
    with tempfile.TemporaryDirectory() as scratch:
        built = Path(scratch)
        build(built)
        differ = [line for suite in suites
                  for line in _differences(built / suite, instances_dir() / suite)]
        for path in sorted(built.rglob("*")):
            name = path.relative_to(built)
            committed = instances_dir() / name
            if (path.is_file() and name.parts[0] not in suites
                    and not (committed.is_file() and filecmp.cmp(path, committed,
                                                                  shallow=False))):
                differ.append(str(name))
    print("\n".join(f"differs: {name}" for name in differ) or "the panel rebuilds identically")
    return 1 if differ else 0


def _differences(built: Path, committed: Path) -> list[str]:
    listed = subprocess.run(["diff", "-rq", str(built), str(committed)], capture_output=True,
                            text=True)
    return [line for line in listed.stdout.splitlines() if "__pycache__" not in line]


def main(argv: list[str], doc: str, build: Callable[[Path], None],
         suites: Sequence[str]) -> int:
    """A builder's command line: build into instances/, or with --check rebuild and compare."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rebuild elsewhere and compare")
    if parser.parse_args(argv).check:
        return check(build, suites)
    build(instances_dir())
    return 0
