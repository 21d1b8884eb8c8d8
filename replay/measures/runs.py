"""Recurring-detail retention of every summary of a sweep run, kept in the store.

For each instance of the run, the history is the one its plan records (`history_of`); the payloads
after the boundary are, in this order: the later steps of the full trajectory when the history
was collected or imported (and the trajectory is in the store; source `trajectory`); the later
steps the suite ships beside the history (`later.json`, written by
scripts/build_later_steps.py for compact-bench; source `suite`); otherwise the PRE
continuation of the run (its messages after the history; source `pre`: what replay's own
continuation agent did next, not the real agent). Every POST summary of the run, mechanical ones
included, is scored against the details of the history that recur in those payloads, paths in
their forms relative to the repository root (`/testbed`). Each row records its reference's
source and size.

Results go to the `retention` table: all rows of a run are replaced in one transaction, so a
report reads either the previous scores or the new ones, never a mix. They are stored, not only
printed, because `replay report` shows them beside task damage without reading traces again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from replay.core.errors import InputError
from replay.core.vocab import Arm, CellStatus
from replay.histories.planned import history_of
from replay.instances.selection import choose_instances
from replay.measures.details import Details, Reading, find_details, serialize
from replay.measures.matching import PathForms
from replay.measures.noise import imported_names, project_names
from replay.measures.retention import (
    Limits,
    Occurrences,
    Score,
    mean,
    recurring_reference,
    score,
)
from replay.models.types import Message
from replay.records.cell import CellId, CellResult
from replay.records.history import History
from replay.records.plan import Plan
from replay.records.retention import KeptScore, ScoreDetail
from replay.records.summary import Summary
from replay.store import Store, continuations, scores, summaries
from replay.store.histories import load_trajectory

LATER_FILE = "later.json"
REPOSITORY_ROOT = "/testbed"


@dataclass(frozen=True)
class Reference:
    """What an instance's summaries are scored against, and where its later payloads came from
    (`trajectory`, `suite` or `pre`; `missing` with the reason when there are none yet)."""

    source: str
    history: Details | None = None
    later: Occurrences | None = None
    reason: str = ""


@dataclass(frozen=True)
class RetentionRow:
    """The retention of one summary of a run."""

    instance_id: str
    summarizer: str
    seed_index: int
    source: str
    score: Score
    chars: int = 0  # the size of the summary's text

    @property
    def share(self) -> float | None:
        """The share of the reference the summary kept (None for an empty reference)."""
        return self.score.share

    def kept(self) -> KeptScore:
        """The score as the store keeps it."""
        return KeptScore(self.instance_id, self.summarizer, self.seed_index, self.share,
                         self.score.found, self.score.size, self.source)


def reference_of(store: Store, history: History, cells: dict[CellId, CellResult],
                 limits: Limits, bundle: Path | None = None) -> Reference:
    """The details of `history` and the payloads after its boundary (see the module docstring);
    `bundle` is the instance's folder in its suite, where shipped later steps are."""
    text = serialize(history.messages)
    project = project_names([REPOSITORY_ROOT])
    details = find_details(text[-limits.max_chars:],
                           Reading(project, imported_names(text, project)))
    trajectory = load_trajectory(store, history.trajectory) if history.trajectory else None
    if trajectory is not None:
        after = serialize(trajectory.messages[len(history.messages):])
        return Reference("trajectory", details, Occurrences(after[:limits.max_chars]))
    shipped = _shipped_payloads(bundle)
    if shipped is not None:
        return Reference("suite", details, Occurrences(shipped[:limits.max_chars]))
    later = _pre_payloads(store, history.instance_id, cells)
    if later is None:
        return Reference("missing", reason="no PRE continuation in the run yet")
    return Reference("pre", details, Occurrences(serialize(later)[:limits.max_chars]))


def _shipped_payloads(bundle: Path | None) -> str | None:
    """The serialized later steps a suite ships beside an instance's history, if any."""
    path = bundle / LATER_FILE if bundle is not None else None
    if path is None or not path.is_file():
        return None
    try:
        return str(json.loads(path.read_text(encoding="utf-8"))["payloads"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a later-steps file ({exc})") from None


def _pre_payloads(store: Store, instance_id: str,
                  cells: dict[CellId, CellResult]) -> list[Message] | None:
    pre = cells.get(CellId(instance_id, Arm.PRE, "", 0))
    if pre is None or pre.status != CellStatus.DONE or not pre.continuation:
        return None
    trace = continuations.trace(store, pre.continuation)
    return None if trace is None else trace.messages[trace.start_index:]


def summary_text(summary: Summary) -> str:
    """What a summary hands on: its text, or the kept messages of observation-masking."""
    return summary.text or serialize(summary.messages or [])


def score_run(store: Store, plan: Plan, cells: dict[CellId, CellResult],
              limits: Limits) -> tuple[list[RetentionRow], list[str]]:
    """Score every kept POST summary of a run (its `plan` and `cells`, as the api hands them
    over); also the instances left out, with why."""
    instances = {i.instance_id: i for i in choose_instances(plan.suite, plan.dataset,
                                                            plan.instances, None, None)}
    references: dict[str, Reference] = {}
    rows, skipped = [], []
    for cell, result in sorted(cells.items()):
        if cell.arm != Arm.POST or not result.summary:
            continue
        summary = summaries.summary(store, result.summary)
        if summary is None:
            continue
        if cell.instance_id not in references:
            instance = instances[cell.instance_id]
            history = history_of(plan, instance, store)
            references[cell.instance_id] = reference_of(store, history, cells, limits,
                                                        instance.bundle)
            found = references[cell.instance_id]
            if found.history is None:
                skipped.append(f"{cell.instance_id}: {found.reason}")
        reference = references[cell.instance_id]
        if reference.history is None or reference.later is None:
            continue
        forms = PathForms.of([REPOSITORY_ROOT], reference.history.values["path"])
        chosen = recurring_reference(reference.history, reference.later, limits, forms=forms)
        text = summary_text(summary)
        rows.append(RetentionRow(cell.instance_id, cell.summarizer, cell.seed_index,
                                 reference.source, score(chosen, text, forms), len(text)))
    return rows, skipped


def keep_scores(store: Store, run: str, rows: Sequence[RetentionRow], limits: Limits) -> None:
    """Replace run `run`'s retention rows with `rows`, all in one transaction."""
    scores.replace(store, run, [ScoreDetail(
        row.kept(), row.score.kept_values(), row.score.missed(), row.score.forms,
        row.score.literal_share, asdict(limits), row.chars)
        for row in rows])


def summarizer_means(rows: Sequence[KeptScore],
                     key: Callable[[str], str] = str) -> dict[str, tuple[Any, ...]]:
    """Mean retention of the seed-0 summaries grouped by `key(summarizer)`: the mean, how many
    were scored, how many had an empty reference (left out of the mean), the references' mean
    size and their sources (`trajectory`, `suite`, `pre`; several joined by `+`)."""
    grouped: dict[str, list[KeptScore]] = {}
    for row in rows:
        if row.seed_index == 0:
            grouped.setdefault(key(row.summarizer), []).append(row)
    means = {}
    for name, chosen in grouped.items():
        size = sum(row.size for row in chosen) / len(chosen)
        sources = "+".join(sorted({row.source for row in chosen} - {""}))
        means[name] = (*mean([row.share for row in chosen]), size, sources)
    return means
