"""The driver's label count: each result re-labels only its pairs, and the count always equals
labelling the whole plan afresh (`outcomes`)."""

from __future__ import annotations

from collections import Counter

from replay.core.vocab import CellStatus, SweepKind, ValidationStatus
from replay.records.cell import CellResult
from replay.records.plan import Plan
from replay.records.validation import Validation
from replay.sweep.labels import Tally, outcomes


def test_tally_matches_a_fresh_labelling_after_every_result() -> None:
    plan = Plan(kind=SweepKind.BACKBONE, agent="a", agent_id="a", instances=("i1", "i2", "i3"),
                summarizers=("s1", "s2"), confirm=(("i1", "s1"),))
    verdicts = {"i1": Validation("i1", ValidationStatus.VALID),
                "i2": Validation("i2", ValidationStatus.VALID),
                "i3": Validation("i3", ValidationStatus.EXCLUDED, ["no tests"])}
    tally = Tally(plan, {}, verdicts)
    assert tally.add(CellResult(plan.cells()[0], CellStatus.DONE, passed=True)) == Counter(
        label.label for label in outcomes(plan, dict(tally.cells), verdicts).values())
    cells: dict = {}
    for index, cell in enumerate(plan.cells()):
        status = CellStatus.ERROR if index == 4 else CellStatus.DONE
        result = CellResult(cell, status, passed=None if index == 4 else index % 4 != 3,
                            refused="too long" if index == 6 else None)
        cells[cell] = result
        expected = Counter(found.label for found in outcomes(plan, cells, verdicts).values())
        assert tally.add(result) == expected
    assert sum(expected.values()) == 6 and expected["excluded"] == 2 and expected["damaged"] == 1
