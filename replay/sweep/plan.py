"""Sweeps as plans of cells, kept in the store: runs, cells and their results."""
from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from replay.core.digest import digest
from replay.core.errors import InputError
from replay.store import Store

KINDS = ("backbone", "prompt")
CONFIRM_SEEDS = (1, 2)
DEFAULT_TEMPERATURE = 1.0  # what new runs sample at (see Plan.temperature)


SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    name TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    plan TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS cells (
    run TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    arm TEXT NOT NULL,
    summarizer TEXT NOT NULL,
    seed_index INTEGER NOT NULL,
    status TEXT NOT NULL,
    passed INTEGER,
    record TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run, instance_id, arm, summarizer, seed_index)
);
CREATE TABLE IF NOT EXISTS summaries (
    key TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL,
    summarizer TEXT NOT NULL,
    seed_index INTEGER NOT NULL,
    record TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""


def open_store(path: Path) -> Store:
    """Open the store at `path` with this module's tables."""
    store = Store.open(path)
    store.db.executescript(SCHEMA)
    return store


def peek_store(path: Path) -> Store:
    """The store at `path` with this module's tables, read-only (see `Store.peek`): nothing is
    created or written."""
    store = Store.peek(path)
    store.db.executescript(SCHEMA)
    return store


@dataclass(frozen=True, order=True)
class CellId:
    """One cell: PRE cells have summarizer "" (they do not depend on one)."""

    instance_id: str
    arm: str
    summarizer: str
    seed_index: int

    def __str__(self) -> str:
        who = f" {self.summarizer}" if self.summarizer else ""
        return f"{self.instance_id} {self.arm}{who} seed {self.seed_index}"


class PlannedHistory(BaseModel):
    """The Phase A history one instance of a run continues from, as the run chose it: its
    content id, its boundary rule, its agent's protocol and model, where it came from (`source`,
    `provenance`), and whether it is the one bundled with the instance (see
    `replay.sweep.histories`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance_id: str
    id: str
    rule: str = ""
    protocol: str = "tool-calls"
    model: str = ""
    source: str = ""
    bundled: bool = False
    provenance: dict[str, str] = {}


class Plan(BaseModel):
    """What a run shares (its frame) and what it varies (instances, summarizers).

    `temperature` is what the agent and the summarizers sample at (a model's own `temperature`
    setting wins for that model). Commands give new runs `DEFAULT_TEMPERATURE`; the 0.0 default
    is what runs stored before it was a setting ran at, so they load as they were.

    `histories` records the history each instance continues from, chosen once when the
    instance joins the run; runs stored before it was recorded have none, and record the
    choice made when they next run.

    `test_timeout` is the seconds a cell's tests may run (`--test-timeout`), kept for the run's
    life; None: each instance's own, derived from its validation (`replay.judge.timeouts`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["backbone", "prompt"]
    suite: str = "demo"
    dataset: str | None = None
    agent: str
    agent_id: str
    carrier: str = "summary-only"
    steps: int = 8
    temperature: float = Field(default=0.0, ge=0)
    prompt_sources: str | None = None
    backend: str = "local"
    instances: tuple[str, ...]
    summarizers: tuple[str, ...]
    confirm: tuple[tuple[str, str], ...] = ()
    histories: tuple[PlannedHistory, ...] = ()
    test_timeout: float | None = Field(default=None, gt=0)

    def history_ids(self) -> dict[str, str]:
        """Instance id -> the content id of the history the run continues it from."""
        return {found.instance_id: found.id for found in self.histories}

    def frame(self) -> dict[str, Any]:
        """What every cell shares; a run keeps one frame for life."""
        return {"kind": self.kind, "suite": self.suite, "dataset": self.dataset,
                "agent_id": self.agent_id, "carrier": self.carrier, "steps": self.steps,
                "temperature": self.temperature, "prompt_sources": self.prompt_sources}

    def default_name(self) -> str:
        """The run name used when none is given: the same command resumes the same run, and
        the same selection with other histories starts another."""
        content = {**self.frame(), "instances": self.instances, "summarizers": self.summarizers}
        if self.histories:
            content["histories"] = self.history_ids()
        return f"{self.kind}-{digest(content)[:10]}"

    def cells(self) -> list[CellId]:
        """Every cell of the plan: PRE per instance, POST per pair, confirmation re-runs."""
        cells = [CellId(instance, "pre", "", 0) for instance in self.instances]
        cells += [CellId(instance, "post", summarizer, 0)
                  for instance in self.instances for summarizer in self.summarizers]
        cells += [CellId(instance, "post", summarizer, seed)
                  for instance, summarizer in self.confirm for seed in CONFIRM_SEEDS]
        return cells

    def extended(self, other: Plan) -> Plan:
        """This plan with the instances, summarizers, confirmations and histories of `other`
        added (a history only for an instance this plan has none for)."""
        mine = self.history_ids()
        return self.model_copy(update={
            "instances": _union(self.instances, other.instances),
            "summarizers": _union(self.summarizers, other.summarizers),
            "confirm": _union(self.confirm, other.confirm),
            "histories": (*self.histories,
                          *(found for found in other.histories if found.instance_id not in mine)),
        })


def _union(first: Iterable[Any], second: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys([*first, *second]))


def load_run(store: Store, name: str) -> Plan | None:
    """The plan of run `name`, if the store has it."""
    row = store.db.execute("SELECT plan FROM runs WHERE name=?", (name,)).fetchone()
    return None if row is None else Plan.model_validate_json(row[0])


def latest_run(store: Store) -> str:
    """The name of the run changed last; bad input when the store has none."""
    row = store.db.execute("SELECT name FROM runs ORDER BY updated_at DESC LIMIT 1").fetchone()
    if row is None:
        raise InputError(f"the store {store.path} has no run yet: run `replay backbone` or "
                         "`replay prompt` first")
    return row[0]


def require_run(store: Store, name: str) -> Plan:
    """The plan of run `name`; bad input naming the runs there are when it is not in the store."""
    plan = load_run(store, name)
    if plan is None:
        names = [row[0] for row in store.db.execute("SELECT name FROM runs ORDER BY name")]
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


def save_run(store: Store, name: str, plan: Plan) -> None:
    """Write (or update) run `name` with its plan."""
    now = time.time()
    store.db.execute(
        "INSERT INTO runs VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
        "digest=excluded.digest, plan=excluded.plan, updated_at=excluded.updated_at",
        (name, digest(plan.frame()), plan.model_dump_json(), now, now))


@dataclass
class CellResult:
    """A cell's result: `done` with passed True/False, or `error` with its cause.

    `spent` counts only model calls made for this cell (not answered from the cache), and
    `estimate` is what the dry run estimated it would cost at most, when it ran;
    `diagnostics` holds what the report shows per continuation. `refused` says which request
    the server refused for its content, and why, when one did: the summarizer's (the POST
    fails: nothing to continue from), or the agent's (its run ended there; at the first step,
    a summary or history the agent cannot read, the cell fails ungraded). `timed_out` is the
    limit, in seconds, that the cell's tests ran into, when they did (the cell fails).
    """

    cell: CellId
    status: Literal["done", "error"]
    passed: bool | None = None
    continuation: str | None = None
    summary: str | None = None
    reused: bool = False
    diagnostics: dict[str, Any] = field(default_factory=dict)
    spent: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0
    refused: str | None = None
    timed_out: float | None = None
    estimate: float = 0.0

    def record(self) -> dict[str, Any]:
        """The JSON stored with the cell."""
        data = asdict(self)
        del data["cell"], data["status"], data["passed"]
        return data


def record_cell(store: Store, run: str, result: CellResult) -> None:
    """Write one cell's result in one statement (an `error` is replaced when it runs again)."""
    cell = result.cell
    passed = None if result.passed is None else int(result.passed)
    store.db.execute(
        "INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (run, cell.instance_id, cell.arm, cell.summarizer, cell.seed_index, result.status,
         passed, json.dumps(result.record()), time.time()))


def load_cells(store: Store, run: str) -> dict[CellId, CellResult]:
    """Every recorded cell of run `run`."""
    rows = store.db.execute(
        "SELECT instance_id, arm, summarizer, seed_index, status, passed, record FROM cells "
        "WHERE run=?", (run,))
    cells = {}
    for instance_id, arm, summarizer, seed, status, passed, record in rows:
        cell = CellId(instance_id, arm, summarizer, seed)
        cells[cell] = CellResult(cell, status, None if passed is None else bool(passed),
                                 **json.loads(record))
    return cells


def pending(plan: Plan, done: dict[CellId, CellResult]) -> list[CellId]:
    """The plan's cells without a `done` result, in plan order."""
    return [cell for cell in plan.cells()
            if cell not in done or done[cell].status != "done"]

