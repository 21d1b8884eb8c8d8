"""What the view's pages show, read from the store and its artifacts; nothing is written.

The grid is the run's report, as `replay report` computes it. A cell page is one POST cell of a
pair (instance, summarizer, seed) beside the run's PRE of that instance: the summary and the
history it replaced (the PRE trace's starting messages), both traces as aligned steps, the test
results and the model calls. Retention highlights come from the `retention` table that
`replay retention RUN` fills.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay.core.vocab import Arm
from replay.measures.runs import summarizer_means
from replay.models.types import Message
from replay.records.cell import CellId, CellResult
from replay.records.outcome import Outcome
from replay.records.retention import ScoreDetail
from replay.records.summary import KeptSummary
from replay.report.calls import Call, cell_calls
from replay.report.contents import Report
from replay.report.costs import cost_sums
from replay.report.pairs import damage_rows, damage_verdict, pairs_of, retention_verdict
from replay.report.plots import plots
from replay.report.tables import build, verdict
from replay.report.web.traces import Divergence, Step, align, first_divergence, steps_of
from replay.store import Store, continuations, summaries
from replay.store.scores import detail as score_detail
from replay.store.scores import kept_scores
from replay.sweep.labels import could_not_run
from replay.sweep.plan import latest_run, require_run

LOG_TAIL_LINES = 200


@contextmanager
def read_store(path: Path, run: str | None) -> Iterator[tuple[Store, str]]:
    """The store at `path` opened read-only and the run to show (the latest when `run` is None);
    bad input when the store has no run, or not that one."""
    store = Store.open_read_only(path)
    try:
        name = run or latest_run(store)
        require_run(store, name)
        yield store, name
    finally:
        store.close()


def run_name(path: Path, run: str | None) -> str:
    """The run `replay view` shows: `run`, checked, or the latest (see `read_store`)."""
    with read_store(path, run) as (_, name):
        return name


@dataclass
class GridView:
    """The grid page: the run's report and its summaries' retention, where scored; the pairs
    verdicts, the cost by summarizer, and the plots as base64 PNG by name."""

    report: Report
    shares: dict[tuple[str, str, int], float | None]
    means: dict[str, tuple[float | None, int, int]]
    verdicts: list[str] = field(default_factory=list)
    differing: list[dict[str, Any]] = field(default_factory=list)
    costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    plots: dict[str, str] = field(default_factory=dict)


def grid_view(store: Store, run: str) -> GridView:
    """The report of run `run` with the retention scores `replay retention` kept for it."""
    scores = kept_scores(store, run)
    report = build(store, run)
    pairs = pairs_of(report, report.names)
    sums = cost_sums(report.cells, report.names)["summarizer"]
    return GridView(report,
                    {(r.instance_id, r.summarizer, r.seed_index): r.share for r in scores},
                    summarizer_means(scores),
                    [line for line in (damage_verdict(pairs), retention_verdict(pairs)) if line],
                    damage_rows(pairs), {row["summarizer"]: row for row in sums},
                    {name.removesuffix(".png"): base64.b64encode(data).decode()
                     for name, data in plots(report).items()})


@dataclass
class Side:
    """One continuation of a cell page: PRE or POST, as far as the store holds it."""

    arm: str
    result: CellResult | None = None
    trace: dict[str, Any] | None = None
    grade: dict[str, Any] | None = None
    steps: list[Step] = field(default_factory=list)
    log_tail: str = ""

    @property
    def verdict(self) -> str:
        """pass, fail, error, refused (the cell could not run), or `not run` when the cell has
        no result yet."""
        return "not run" if self.result is None else verdict(self.result)

    @property
    def could_not_run(self) -> str | None:
        """Why the cell could not run (its first request was refused), if it could not."""
        if self.result is None or not could_not_run(self.result):
            return None
        return self.result.refused


@dataclass
class TestRow:
    """A FAIL_TO_PASS test and its status after PRE and after POST."""

    test: str
    pre: str
    post: str


@dataclass
class CellView:
    """Everything a cell page shows."""

    report: Report
    outcome: Outcome
    cell: CellId
    seeds: list[int]
    pre: Side
    post: Side
    history: list[Message] | None
    summary: KeptSummary | None
    retention: ScoreDetail | None
    divergence: Divergence | None
    tests: list[TestRow]
    calls: list[Call]

    @property
    def rows(self) -> list[tuple[int, Step | None, Step | None]]:
        return align(self.pre.steps, self.post.steps)

    @property
    def acted(self) -> bool:
        """Whether PRE or POST ran any action at all."""
        return any(step.actions for step in (*self.pre.steps, *self.post.steps))


def seeds_of(report: Report, instance: str, summarizer: str) -> list[int]:
    """The seeds the run holds (or plans) for a pair: 0, and 1 and 2 when it is confirmed."""
    return sorted({0} | {cell.seed_index for cell in report.plan.cells()
                         if (cell.instance_id, cell.summarizer) == (instance, summarizer)})


def cell_view(store: Store, report: Report, instance: str, summarizer: str,
              seed: int) -> CellView:
    """The page of a pair's POST cell at `seed` beside the instance's PRE."""
    cell = CellId(instance, Arm.POST, summarizer, seed)
    pre = _side(store, "pre", report.cells.get(CellId(instance, Arm.PRE, "", 0)))
    post = _side(store, "post", report.cells.get(cell))
    history = None
    if pre.trace is not None:
        history = pre.trace["messages"][:pre.trace["start_index"]]
    summary = _summary(store, post.result)
    calls = _calls(pre.result, post.result, store)
    return CellView(report, report.outcomes[(instance, summarizer)], cell,
                    seeds_of(report, instance, summarizer), pre, post, history, summary,
                    _retention(store, report.run, cell), _divergence(pre, post),
                    _tests(pre.grade, post.grade), calls)


def _side(store: Store, arm: str, result: CellResult | None) -> Side:
    side = Side(arm, result)
    if result is None or not result.continuation:
        return side
    trace = continuations.trace(store, result.continuation)
    if trace is not None:
        side.trace = trace.to_dict()
        side.steps = steps_of(side.trace)
    kept = continuations.find(store, result.continuation)
    side.grade = kept.grade.to_dict() if kept is not None else None
    log = continuations.tests_log(store, result.continuation)
    if log is not None:
        side.log_tail = "\n".join(log.splitlines()[-LOG_TAIL_LINES:])
    return side


def _summary(store: Store, post: CellResult | None) -> KeptSummary | None:
    if post is None or not post.summary:
        return None
    return summaries.find(store, post.summary)


def _retention(store: Store, run: str, cell: CellId) -> ScoreDetail | None:
    return score_detail(store, run, cell.instance_id, cell.summarizer, cell.seed_index)


def _divergence(pre: Side, post: Side) -> Divergence | None:
    if pre.trace is None or post.trace is None:
        return None
    return first_divergence(pre.steps, post.steps)


def _tests(pre: dict[str, Any] | None, post: dict[str, Any] | None) -> list[TestRow]:
    names: dict[str, None] = {}
    for grade in (pre, post):
        for tests in ((grade or {}).get("fail_to_pass") or {}).values():
            names.update(dict.fromkeys(tests))
    return [TestRow(name, _status(pre, name), _status(post, name)) for name in names]


def _status(grade: dict[str, Any] | None, test: str) -> str:
    if grade is None:
        return "not run"
    if test in (grade.get("fail_to_pass") or {}).get("success", []):
        return "PASSED"
    return (grade.get("statuses") or {}).get(test, "not found in the log")


def _calls(pre: CellResult | None, post: CellResult | None, store: Store) -> list[Call]:
    return cell_calls(store, pre) + cell_calls(store, post)
