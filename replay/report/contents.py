"""What a run's report holds: the outcome of every pair, each summarizer's damage rate, each
prompt's pass counts and the seed-0 retention scores (built from the store by
`replay.report.tables.build`; drawn by the tables, the exports, the plots and the web view)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replay.measures.statistics import Interval, bootstrap_mean
from replay.records.cell import CellId, CellResult
from replay.records.outcome import Outcome
from replay.records.plan import Plan
from replay.report.calls import Call
from replay.sweep.labels import could_not_run, summary_truncated


@dataclass
class Rate:
    """Task damage of one summarizer: damaged / PRE-pass, with the confirmation counts."""

    summarizer: str
    pre_pass: int = 0
    damaged: int = 0
    stable: int = 0
    seed_variable: int = 0
    unconfirmed: int = 0
    retention: tuple[Any, ...] | None = None
    refused: int = 0  # pairs (of any label) with a request refused, or a cell that could not run
    truncated: int = 0  # POST summaries (every seed) cut off at the summarizer's output cap

    @property
    def rate(self) -> float | None:
        return self.damaged / self.pre_pass if self.pre_pass else None


@dataclass
class PromptRow:
    """POST passes out of the PRE-pass pairs of every summarizer using one prompt."""

    prompt: str
    summarizers: list[str] = field(default_factory=list)
    pre_pass: int = 0
    post_pass: int = 0
    retention: tuple[Any, ...] | None = None


@dataclass
class Report:
    """Everything the report shows, computed from the store."""

    run: str
    plan: Plan
    outcomes: dict[tuple[str, str], Outcome]
    cells: dict[CellId, CellResult]
    rates: list[Rate]
    prompts: list[PromptRow]
    retention: dict[tuple[str, str, int], float | None] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # summarizer -> its column name
    shared: str = ""  # what the columns share, said once (`model X`, `prompt P`)
    calls: dict[CellId, list[Call]] = field(default_factory=dict)  # each cell's model calls

    def shown(self, summarizer: str) -> str:
        """The column name of `summarizer`."""
        return self.names.get(summarizer, summarizer)

    @property
    def truncated(self) -> bool:
        """Whether a summary of the run was cut off: only then do tables have a `truncated`
        column (an ordinary run's report reads as before it existed)."""
        return any(summary_truncated(result) for result in self.cells.values())

    @property
    def not_run(self) -> bool:
        """Whether a cell of the run could not run (its first request refused): only then do
        the exports carry a `not_run` field."""
        return any(could_not_run(result) for result in self.cells.values())


def retention_interval(report: Report, summarizers: list[str]) -> Interval | None:
    """The bootstrap interval of the mean retention of the seed-0 summaries of `summarizers`."""
    return bootstrap_mean([share for (_, s, seed), share in sorted(report.retention.items())
                           if s in summarizers and seed == 0 and share is not None])
