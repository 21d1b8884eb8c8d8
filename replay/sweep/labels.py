"""Labels of (instance, summarizer) pairs from their cells, and three-run confirmation.

A PRE or POST whose tests timed out is a failing run of the agent's tree, as any other: the hang
is the agent's code, since the validated tests finished within the limit on the gold tree (a
limit that cuts those short makes the cell an `error`, never a label; see
`replay.judge.timeouts`). Its pair says so in `Outcome.timed_out`.

A cell that could not run (its first request refused: the history, or the summary, longer than
the model's context) is not a run that failed. When it is the PRE, the pair is `unevaluated`:
the protocol compares POST with a PRE verdict and there is none, so the pair stays outside the
PRE-pass set (it is not `unsolved`, which says the agent tried from the full history and
failed). When it is the POST, the POST fails, as a run with nothing to continue from: the
compaction lost the task (its summary was refused, or is one the agent cannot read), which is
the cost a user of that summarizer bears. Either way the pair says so in `Outcome.not_run`.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from replay.core.vocab import Arm, CellStatus, Confirmation, Label, ValidationStatus
from replay.records.cell import CellId, CellResult
from replay.records.outcome import Outcome
from replay.records.plan import CONFIRM_SEEDS, Plan
from replay.records.validation import Validation
from replay.store import Store
from replay.store import validations as stored_validations


def label(pre: bool, post: bool) -> Label:
    """The label of a PRE and a POST result."""
    if pre:
        return Label.PRESERVED if post else Label.DAMAGED
    return Label.RESCUED if post else Label.UNSOLVED


def confirmation(runs: tuple[bool | None, ...]) -> Confirmation:
    """`stable` when POST failed in 2 of 3 runs, `seed-variable` when it passed in 2, else
    `pending` (a confirmation run is missing or ended in an error)."""
    fails = sum(1 for passed in runs if passed is False)
    passes = sum(1 for passed in runs if passed is True)
    if fails >= 2:
        return Confirmation.STABLE
    if passes >= 2:
        return Confirmation.SEED_VARIABLE
    return Confirmation.PENDING


def outcomes(plan: Plan, cells: dict[CellId, CellResult],
             validations: dict[str, Validation | None]) -> dict[tuple[str, str], Outcome]:
    """The label of every (instance, summarizer) pair of the plan, keyed by the pair."""
    confirming = set(plan.confirm)
    result = {}
    for instance in plan.instances:
        for summarizer in plan.summarizers:
            result[(instance, summarizer)] = _outcome(
                instance, summarizer, cells, validations.get(instance),
                (instance, summarizer) in confirming)
    return result


class Tally:
    """The pairs' labels counted as cells arrive: a cell's result re-labels only the pairs it
    belongs to (a PRE: its instance's pairs; a POST: its own), not the whole plan."""

    def __init__(self, plan: Plan, cells: dict[CellId, CellResult],
                 validations: dict[str, Validation | None]) -> None:
        self.plan, self.cells, self.validations = plan, cells, validations
        self.confirming = set(plan.confirm)
        self.pairs = outcomes(plan, cells, validations)
        self.labels: Counter[str] = Counter(found.label for found in self.pairs.values())

    def add(self, result: CellResult) -> Counter[str]:
        """Record `result` among the cells; the labels of all the plan's pairs now."""
        cell = result.cell
        self.cells[cell] = result
        for summarizer in self.plan.summarizers if cell.arm == Arm.PRE else (cell.summarizer,):
            pair = (cell.instance_id, summarizer)
            if pair not in self.pairs:
                continue
            self.labels[self.pairs[pair].label] -= 1
            self.pairs[pair] = _outcome(cell.instance_id, summarizer, self.cells,
                                        self.validations.get(cell.instance_id),
                                        pair in self.confirming)
            self.labels[self.pairs[pair].label] += 1
        return +self.labels


def _outcome(instance: str, summarizer: str, cells: dict[CellId, CellResult],
             validation: Validation | None, confirming: bool) -> Outcome:
    if validation is not None and validation.status == ValidationStatus.EXCLUDED:
        return Outcome(instance, summarizer, Label.EXCLUDED, cause="; ".join(validation.reasons))
    if validation is not None and validation.status == ValidationStatus.ERROR:
        return Outcome(instance, summarizer, Label.ERROR, cause="; ".join(validation.reasons))
    pre = cells.get(CellId(instance, Arm.PRE, "", 0))
    post = cells.get(CellId(instance, Arm.POST, summarizer, 0))
    for cell in (pre, post):
        if cell is not None and cell.status == CellStatus.ERROR:
            why = cell.fault.text() if cell.fault else ""
            return Outcome(instance, summarizer, Label.ERROR, cause=f"{cell.cell}: {why}")
    notes = _notes(pre, post)
    if could_not_run(pre):  # no PRE verdict: outside the PRE-pass set, whatever POST did
        return Outcome(instance, summarizer, Label.UNEVALUATED, None,
                       None if post is None else post.passed, **notes)
    if pre is None or post is None or pre.passed is None or post.passed is None:
        return Outcome(instance, summarizer, Label.UNEVALUATED)
    name = label(pre.passed, post.passed)
    if name != Label.DAMAGED or not confirming:
        return Outcome(instance, summarizer, name, pre.passed, post.passed, **notes)
    runs = (post.passed, *[_passed(cells.get(CellId(instance, Arm.POST, summarizer, seed)))
                           for seed in CONFIRM_SEEDS])
    return Outcome(instance, summarizer, name, pre.passed, post.passed, confirmation(runs), runs,
                   **notes)


def _notes(*cells: CellResult | None) -> dict[str, Any]:
    """What an outcome says of its seed-0 cells: refusals after the agent ran, cells that could
    not run, tests that timed out, a summary cut off."""
    found = [cell for cell in cells if cell is not None]

    def joined(texts: Iterable[str]) -> str | None:
        return "; ".join(texts) or None

    return {"refused": joined(f"{cell.cell.arm.upper()} {cell.refused}" for cell in found
                              if cell.refused and not could_not_run(cell)),
            "not_run": joined(f"{cell.cell.arm.upper()} {cell.refused}" for cell in found
                              if could_not_run(cell)),
            "timed_out": joined(f"{cell.cell.arm.upper()} tests timed out after "
                                f"{cell.timed_out:g} s" for cell in found
                                if cell.timed_out is not None),
            "truncated": any(summary_truncated(cell) for cell in found)}


def could_not_run(cell: CellResult | None) -> bool:
    """Whether a recorded cell could not run: its first request (the summarizer's, or the
    agent's on the history or the summary) was refused before any step, so nothing it was
    given was read and nothing was graded."""
    return (cell is not None and cell.status == CellStatus.DONE and cell.refused is not None
            and not cell.diagnostics.get("steps"))


def summary_truncated(cell: CellResult | None) -> bool:
    """Whether a POST cell's summary was cut off at the summarizer's output cap."""
    return cell is not None and bool((cell.diagnostics.get("summary") or {}).get("truncated"))


def _passed(cell: CellResult | None) -> bool | None:
    return None if cell is None or cell.status != CellStatus.DONE else cell.passed


def damaged(found: dict[tuple[str, str], Outcome]) -> list[tuple[str, str]]:
    """The damaged pairs, in plan order."""
    return [pair for pair, outcome in found.items() if outcome.label == Label.DAMAGED]


def validations(store: Store, plan: Plan) -> dict[str, Validation | None]:
    """The verdict on each instance of the plan on the plan's backend."""
    return {instance: stored_validations.find(store, instance, plan.backend)
            for instance in plan.instances}

