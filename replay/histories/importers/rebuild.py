"""Import: execute a recorded trajectory's actions once, compare outputs, keep the trees.

The actions run in order in a fresh environment of the instance (reset to its base commit), and
the tree is snapshotted after every step, as a collection does, so any step can become the
boundary. Each output is compared with the recorded one (trailing spaces and durations aside);
where they differ, the divergence is reported with the trajectory and kept with its histories,
benign (where or when the command ran) or real (`divergences.py`). SWE-agent's editor commands
are done as file operations (`editor.py`). A trajectory whose tree contradicts its messages (it
submitted a patch, and executing its actions changed none of the patch's files) is refused
before anything is stored. The result is frozen: importing the same trajectory again finds it in
the store, and PRE and POST only restore its snapshots.
"""

from __future__ import annotations

import copy
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from replay.agent.tools import ToolError, run_tool
from replay.core.digest import digest
from replay.core.errors import InputError
from replay.core.vocab import ExitReason, HistorySource
from replay.environments import snapshots
from replay.environments.base import Backend, Environment
from replay.environments.recipes import Recipe, load_recipe
from replay.histories.boundaries import Rule, StepMark, cut
from replay.histories.importers import name_hint, read_trajectory
from replay.histories.importers.divergences import compare
from replay.histories.importers.editor import EditorError, EditorSession
from replay.histories.importers.recorded import Recorded, RecordedAction
from replay.histories.trajectories import (
    context_tokens,
    cut_history,
    diff_blocks,
    estimate_tokens,
    record_step,
    with_context_tokens,
)
from replay.instances.records import Instance
from replay.judge.testrun import LogKeeper, log_file, run_tests
from replay.judge.timeouts import cell_timeout
from replay.records.grade import DEFAULT_TEST_TIMEOUT
from replay.records.history import History
from replay.records.trajectory import Step, Trajectory
from replay.store import Store, validations
from replay.store.histories import keep, keep_tests_log, load_trajectory

COMMAND_TIMEOUT = 120.0
OUTPUT_LIMIT = 1_000_000


@dataclass(frozen=True)
class Imported:
    """One imported file: its trajectory and the histories cut from it."""

    path: Path
    format: str
    trajectory: Trajectory
    histories: list[History]
    reused: bool


def import_key(recorded: Recorded, instance: Instance) -> str:
    """The identity of an imported trajectory: its format, instance, model and messages."""
    return digest({"kind": HistorySource.IMPORTED, "format": recorded.format,
                   "instance": instance.instance_id, "base_commit": instance.base_commit,
                   "model": recorded.model, "messages": recorded.messages})


def import_files(paths: Sequence[Path], rules: Sequence[Rule], instances: Sequence[Instance],
                 backend: Backend, store: Store, fmt: str = "auto",
                 instance_id: str | None = None,
                 test_timeout: float | None = None) -> tuple[list[Imported], set[str]]:
    """Import trajectory files and cut `rules` from each; return them and the new history ids.
    The final tree's tests may run `test_timeout` seconds (default: derived from the instance's
    validation, see `replay.judge.timeouts`).

    Every file is read and checked first and every boundary cut before anything is stored, so
    bad input (a corrupt file, another instance, a boundary past the end) leaves no trace.
    """
    recorded, chosen = check_files(paths, rules, instances, fmt, instance_id)
    with tempfile.TemporaryDirectory(prefix="replay-import-") as scratch:
        imported = [_import_one(path, trajectory, instance, backend, store, rules,
                                Path(scratch), test_timeout)
                    for path, trajectory, instance in zip(paths, recorded, chosen, strict=True)]
        imported = [replace(item, histories=[cut_history(item.trajectory, rule)
                                             for rule in rules]) for item in imported]
        for item in imported:
            log = Path(scratch) / f"{item.trajectory.key}.log"
            if log.is_file():
                keep_tests_log(store, item.trajectory.key, log.read_bytes())
    fresh = keep(store, [h for item in imported for h in item.histories],
                 [item.trajectory for item in imported if not item.reused])
    return imported, fresh


def check_files(paths: Sequence[Path], rules: Sequence[Rule], instances: Sequence[Instance],
                fmt: str = "auto", instance_id: str | None = None,
                ) -> tuple[list[Recorded], list[Instance]]:
    """Read every file, find its instance and check every rule that needs only its steps;
    bad input raises before anything runs or is stored. Returns the recordings and instances."""
    by_id = {instance.instance_id: instance for instance in instances}
    recorded = [read_trajectory(path, fmt) for path in paths]
    chosen = [_instance(path, r, instance_id, by_id) for path, r in zip(paths, recorded,
                                                                        strict=True)]
    for path, trajectory in zip(paths, recorded, strict=True):
        _precheck(path, trajectory, rules)
    return recorded, chosen


def _import_one(path: Path, recorded: Recorded, instance: Instance, backend: Backend,
                store: Store, rules: Sequence[Rule], scratch: Path,
                test_timeout: float | None = None) -> Imported:
    """The stored trajectory of this file, or a new one built by executing it once."""
    key = import_key(recorded, instance)
    kept = load_trajectory(store, key)
    if kept is not None:
        return Imported(path, recorded.format, kept, [], reused=True)
    recipe = load_recipe(instance, mirrors=backend.mirrors)
    env = backend.start(instance, recipe)
    try:
        source = f"{HistorySource.IMPORTED} {recorded.format} {path.name}"
        built = rebuild(recorded, instance, env, recipe, key, source,
                        log_file(scratch / f"{key}.log"), rules,
                        cell_timeout(test_timeout, validations.find(store, instance.instance_id,
                                                                    backend.name)))
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    return Imported(path, recorded.format, built, [], reused=False)


def _instance(path: Path, recorded: Recorded, wanted: str | None,
              by_id: dict[str, Instance]) -> Instance:
    named = recorded.instance_id
    if named and wanted and named != wanted:
        raise InputError(f"{path}: a trajectory of {named}, not of {wanted}")
    ident = named or wanted or name_hint(path)
    if ident not in by_id:
        how = "" if named or wanted else " (taken from the file name; pass --instance)"
        raise InputError(f"{path}: unknown instance {ident!r}{how} in the chosen suite or "
                         "dataset")
    return by_id[ident]


def _precheck(path: Path, recorded: Recorded, rules: Sequence[Rule]) -> None:
    """Refuse before executing anything a rule that needs only the steps and their tokens
    (counted from the recorded messages, as the import will count them)."""
    requests = [step.input_tokens for step in recorded.steps]
    counted = context_tokens([step.end for step in recorded.steps], requests, recorded.messages)
    marks = [StepMark(tokens) for tokens, _ in counted]
    opening = requests[0] or estimate_tokens(recorded.messages[:recorded.opening])
    for rule in rules:
        if rule.kind in ("steps", "fraction", "tokens"):
            try:
                cut(rule, marks, opening)
            except InputError as exc:
                raise InputError(f"{path}: {exc}") from None


def rebuild(recorded: Recorded, instance: Instance, env: Environment, recipe: Recipe,
            key: str, source: str, keep_log: LogKeeper, rules: Sequence[Rule] = (),
            test_timeout: float = DEFAULT_TEST_TIMEOUT) -> Trajectory:
    """Execute the recorded actions once, snapshotting after each step, and grade the end.

    `rules` are cut once the trees are known and before the tests run, so a boundary that
    lands past the end is reported without waiting for them.
    """
    base = snapshots.at_base(env, instance.base_commit)
    env.restore(base)
    messages = copy.deepcopy(recorded.messages)
    steps: list[Step] = []
    previous = base.diff
    editor = EditorSession(env)
    for number, step in enumerate(recorded.steps, start=1):
        notes = [_run(env, editor, action, messages, number) for action in step.actions]
        steps.append(record_step(env, step.end, previous, [note for note in notes if note]))
        previous = steps[-1].diff
    check_tree(recorded, previous)
    opening, steps = _with_tokens(recorded, messages, steps)
    trajectory = Trajectory(key=key, instance_id=instance.instance_id,
                            base_commit=instance.base_commit, model=recorded.model,
                            source=source, messages=messages, opening_tokens=opening,
                            steps=steps, exit_reason=ExitReason.IMPORTED, resolved=None,
                            dialect=recorded.dialect)
    for rule in rules:
        cut_history(trajectory, rule)
    snapshots.settle(env, instance.base_commit)  # the tests see the tree alone
    return replace(trajectory,
                   resolved=run_tests(env, instance, recipe, keep_log, test_timeout).resolved)


def check_tree(recorded: Recorded, final_diff: bytes) -> None:
    """Refuse a trajectory whose submitted patch changes files that executing its actions
    left untouched: its tree contradicts its messages (edits reported done, not done here)."""
    claimed = set(re.findall(r"(?m)^diff --git a/(\S+) b/", recorded.submission or ""))
    if not claimed or claimed & set(diff_blocks(final_diff)):
        return
    left = "an unchanged tree" if not final_diff.strip() else "none of them changed"
    raise InputError(f"the trajectory's tree contradicts its messages: it submitted changes to "
                     f"{', '.join(sorted(claimed))}, but executing its actions left {left}")


def _run(env: Environment, editor: EditorSession, action: RecordedAction, messages: list,
         step: int) -> str | None:
    """Execute one action; a line saying how it diverged from the record, or None."""
    if action.tool == "finish":
        return None
    if action.tool == "editor":
        try:
            editor.run(str(action.arguments["command"]), action.expected.text or "")
        except (EditorError, ValueError) as exc:
            return f"step {step}: {action.describe()}: recorded as done, not done here: {exc}"
        return None
    if action.raw and action.tool == "bash":
        result = env.exec(str(action.arguments.get("command", "")), timeout=COMMAND_TIMEOUT,
                          output_limit=OUTPUT_LIMIT)
        output, code = result.output, result.exit_code
    else:
        code = None
        try:
            output = run_tool(env, action.tool, action.arguments, COMMAND_TIMEOUT).output
        except ToolError as exc:
            output = f"error: {exc}"
    if action.expected.text is None:
        messages[action.message_index]["content"] = output
        return f"step {step}: {action.describe()}: no output was recorded; the executed " \
               "output fills its tool message"
    command = str(action.arguments.get("command", ""))
    found = compare(action.expected, output, code, command)
    return f"step {step}: {action.describe()}: {found.describe()}" if found else None


def _with_tokens(recorded: Recorded, messages: list,
                 steps: list[Step]) -> tuple[int, list[Step]]:
    """The opening's context tokens, and the steps with theirs (the next request's, else
    estimated)."""
    requests = [step.input_tokens for step in recorded.steps]
    return (requests[0] or estimate_tokens(messages[:recorded.opening]),
            with_context_tokens(steps, requests, messages))
