"""A sweep's plan against its stored run: which run, whether the plan fits it, and the cells it
still has to run (the store keeps runs and cells: `replay.store.runs`)."""
from __future__ import annotations

from collections.abc import Mapping

from replay.core.errors import InputError
from replay.core.vocab import CellStatus
from replay.records.cell import CellId, CellResult
from replay.records.plan import Plan
from replay.store import Store, runs
from replay.store.runs import load_run

KINDS = ("backbone", "prompt")




def latest_run(store: Store) -> str:
    """The name of the run changed last; bad input when the store has none."""
    name = runs.latest_name(store)
    if name is None:
        raise InputError(f"the store {store.path} has no run yet: run `replay backbone` or "
                         "`replay prompt` first")
    return name


def require_run(store: Store, name: str) -> Plan:
    """The plan of run `name`; bad input naming the runs there are when it is not in the store."""
    plan = load_run(store, name)
    if plan is None:
        names = runs.names(store)
        known = f"; runs: {', '.join(names)}" if names else ""
        raise InputError(f"no run {name!r} in {store.path}{known}")
    return plan


def bind_run(store: Store, name: str, plan: Plan) -> Plan:
    """The plan that run `name` has once `plan` is added to it (nothing is written).

    Raises `InputError` when the run exists with another frame, continues an instance of
    `plan` from another history, or `plan` gives another test timeout than the run's (a plan
    that gives none keeps the run's).
    """
    existing = load_run(store, name)
    if existing is None:
        return plan
    if existing.frame() != plan.frame():
        differs = [key for key, value in plan.frame().items() if existing.frame()[key] != value]
        raise InputError(f"run {name!r} belongs to a different plan ({', '.join(differs)} "
                         f"differ); choose another --run name")
    recorded = existing.history_ids()
    for found in plan.histories:
        before = recorded.get(found.instance_id, found.id)
        if before != found.id:
            raise InputError(f"run {name!r} continues {found.instance_id} from history "
                             f"{before[:12]}, not {found.id[:12]}; resume it with --history "
                             f"{before[:12]}, or choose another --run name")
    check_timeout(name, existing, plan.test_timeout)
    return existing.extended(plan)


def timeout_text(seconds: float | None) -> str:
    """A run's test timeout in words."""
    return ("each instance's own (derived from its validation)" if seconds is None
            else f"{seconds:g} s")


def check_timeout(name: str, existing: Plan, given: float | None) -> None:
    """Refuse a `--test-timeout` other than the one run `name` keeps for life."""
    if given is not None and given != existing.test_timeout:
        raise InputError(f"run {name!r} keeps the test timeout it began with, "
                         f"{timeout_text(existing.test_timeout)}, not --test-timeout {given:g}: "
                         "resume it without --test-timeout, or choose another --run name")


def pending(plan: Plan, done: Mapping[CellId, CellResult]) -> list[CellId]:
    """The plan's cells without a `done` result, in plan order."""
    return [cell for cell in plan.cells()
            if cell not in done or done[cell].status != CellStatus.DONE]

