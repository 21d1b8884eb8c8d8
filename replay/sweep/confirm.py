"""Protocol step 8: confirm each damaged pair of a run at two more seeds.

A damaged (instance, summarizer) pair joins the run's confirmation set; its POST cells at seed
indices 1 and 2 (a fresh summary and a fresh continuation each) then become part of the plan,
reusing seed 0's PRE. Labels say `stable` damage when POST fails in at least 2 of the 3 runs.

Fresh samples need sampling: each request carries its sample index as the seed where the
provider takes one, and the run's temperature. A model asked at temperature 0 decodes greedily,
so a deterministic server (llama.cpp, vLLM) answers seeds 1 and 2 as it answered seed 0, and
confirmation can only ever find `stable` damage there; `fixed_samples` names such models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from replay.models.types import ModelSpec
from replay.records.plan import CONFIRM_SEEDS, Plan
from replay.store import Store
from replay.store.runs import load_cells
from replay.sweep.labels import damaged, outcomes, validations
from replay.sweep.plan import pending


def fixed_samples(plan: Plan, specs: Iterable[ModelSpec]) -> list[str]:
    """The models among `specs` that the run asks at temperature 0 (their own setting, else the
    plan's): their samples cannot differ from seed to seed on a deterministic server."""
    return [spec.alias for spec in specs
            if (plan.temperature if spec.temperature is None else spec.temperature) == 0]


def confirm_pairs(store: Store, name: str, plan: Plan, dry_run: bool,
                  run_plan: Callable[[Plan], int], say: Callable[[str], None],
                  note: str | None = None) -> tuple[Plan, int]:
    """Add the run's damaged pairs to its confirmation set and run what is pending.

    Pending seed-0 cells of the run are run too, and pairs they turn out damaged are confirmed
    in a second round. `run_plan` runs a plan's pending cells and returns 0, or 1 when a cell
    ended in an error; with `dry_run` it only shows the first round. `note` is said once, with
    the first round that confirms anything. Returns the plan with its confirmation set and the
    last exit code.
    """
    code = 0
    for _ in range(2):
        cells = load_cells(store, name)
        found = outcomes(plan, cells, validations(store, plan))
        pairs = [pair for pair in damaged(found) if pair not in plan.confirm]
        plan = plan.model_copy(update={"confirm": (*plan.confirm, *pairs)})
        if not pending(plan, cells):
            break
        say(f"run {name}: confirming {len(plan.confirm)} damaged pair(s) at seeds "
            f"{' and '.join(map(str, CONFIRM_SEEDS))}")
        if note and plan.confirm:
            say(note)
            note = None
        code = run_plan(plan)
        if dry_run:
            break
    return plan, code
