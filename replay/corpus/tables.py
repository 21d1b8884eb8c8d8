"""The Compact-Bench study's retention tables (§3.2, §4.3, appendices C and L) on a scored
corpus, each row beside the study's figure.

Rows (every mean over the boundaries of sessions the completeness filter keeps, a boundary
counting where its reference holds at least one detail):

- production-chain retention by boundary position, with n and a 95% bootstrap interval;
- boundaries whose `/compact` carried instructions against the others (Claude Code only);
- the mean last-to-first ratio over sessions with a scorable first and last boundary, sessions
  whose first score is zero left out (the study's exclusion), and how many were;
- recurring-detail retention of the production summaries and of `anchor_index` cut to each
  summary's size, on the same boundaries;
- production-chain and recurring retention by client (the session's format);
- boundaries with at least one future detail, of all boundaries;
- Appendix L's completeness filter: sessions it removes;
- the detail types: for each, its measured precision on the shipped labels and whether it was
  scored (`replay.corpus.precision`: the 0.95 rule, or `--kinds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from replay.corpus.precision import KindChoice
from replay.measures.details import KINDS
from replay.measures.statistics import bootstrap_mean

STUDY_POSITIONS = {1: (0.157, 106), 2: (0.199, 27), 3: (0.049, 6), 4: (0.018, 1)}


@dataclass
class Row:
    """One figure: ours (a mean or a count), its n and interval, and the study's."""

    table: str
    label: str
    value: float | None
    n: int
    low: float | None = None
    high: float | None = None
    study: str = ""
    share: bool = True  # a share shown as a percentage (else a plain number)


@dataclass
class SessionRecord:
    """A scored session: the manifest's facts and the worker's record."""

    repository: str
    agent: str
    record: dict[str, Any]

    @property
    def kept(self) -> bool:
        """Scored and kept by the completeness filter."""
        return "error" not in self.record and bool(self.record.get("kept"))


@dataclass
class Tables:
    """The rows, and the counts a reader needs beside them."""

    rows: list[Row] = field(default_factory=list)
    sessions: int = 0
    incomplete: int = 0
    unreadable: int = 0
    removed: int = 0
    scored_kinds: list[str] = field(default_factory=list)
    kinds_named: bool = False  # True: --kinds chose the scored types; False: the 0.95 rule


def mean_row(table: str, label: str, values: Sequence[float], study: str = "") -> Row:
    """A mean row with its n and 95% bootstrap interval."""
    interval = bootstrap_mean(values)
    return Row(table, label, sum(values) / len(values) if values else None, len(values),
               interval.low if interval else None, interval.high if interval else None, study)


def _boundaries(sessions: Sequence[SessionRecord]) -> list[dict[str, Any]]:
    return [c for s in sessions if s.kept for c in s.record["compactions"]]


def position_rows(sessions: Sequence[SessionRecord]) -> list[Row]:
    """Production-chain retention by boundary position."""
    found = _boundaries(sessions)
    last = max((c["position"] for c in found), default=0)
    rows = []
    for position in range(1, max(last, 4) + 1):
        values = [c["production"] for c in found
                  if c["position"] == position and c["production"] is not None]
        study = STUDY_POSITIONS.get(position)
        rows.append(mean_row("production chain by position", f"boundary {position}", values,
                          f"{100 * study[0]:.1f}% (n={study[1]})" if study else ""))
    return rows


def instruction_rows(sessions: Sequence[SessionRecord]) -> list[Row]:
    """Production-chain retention with and without explicit summary instructions."""
    found = [c for c in _boundaries(sessions) if c["production"] is not None]
    return [mean_row("summary instructions", "with /compact instructions",
                  [c["production"] for c in found if c["instructed"] is True], "19.0%"),
            mean_row("summary instructions", "without",
                  [c["production"] for c in found if c["instructed"] is False], "11.4%")]


def ratio_rows(sessions: Sequence[SessionRecord]) -> list[Row]:
    """The mean last-to-first ratio, zero first scores excluded, and how many were."""
    ratios, zero = [], 0
    for session in sessions:
        if not session.kept:
            continue
        scores = [c["production"] for c in session.record["compactions"]
                  if c["production"] is not None]
        if len(scores) < 2:
            continue
        if scores[0] == 0:
            zero += 1
            continue
        ratios.append(scores[-1] / scores[0])
    row = mean_row("last-to-first ratio", "mean last / first", ratios, "4.07 (n=20)")
    row.share = False
    excluded = Row("last-to-first ratio", "sessions with a zero first score (excluded)", zero,
                   zero, study="2", share=False)
    return [row, excluded]


def recurring_rows(sessions: Sequence[SessionRecord]) -> list[Row]:
    """Recurring-detail retention of the summaries and of budget-matched anchor_index."""
    found = [c for c in _boundaries(sessions)
             if c["recurring"] is not None and c["anchor_recurring"] is not None]
    return [mean_row("recurring details", "production summaries",
                  [c["recurring"] for c in found], "at most 16.0% (LLM summaries)"),
            mean_row("recurring details", "anchor_index (summary's size)",
                  [c["anchor_recurring"] for c in found], "79.1%")]


def client_rows(sessions: Sequence[SessionRecord]) -> list[Row]:
    """Production-chain and recurring retention by client."""
    rows = []
    for client in sorted({s.record["format"] for s in sessions if s.kept}):
        mine = [s for s in sessions if s.kept and s.record["format"] == client]
        found = _boundaries(mine)
        rows.append(mean_row("by client", f"{client}: production chain",
                          [c["production"] for c in found if c["production"] is not None]))
        rows.append(mean_row("by client", f"{client}: recurring details",
                          [c["recurring"] for c in found if c["recurring"] is not None]))
    return rows


def count_rows(sessions: Sequence[SessionRecord], removed: int, scored: int) -> list[Row]:
    """Boundaries with a future detail, and sessions the completeness filter removes."""
    found = _boundaries(sessions)
    with_future = sum(1 for c in found if c["future_size"] > 0)
    return [Row("boundaries", "with at least one future detail", with_future, len(found),
                study="140 of 224", share=False),
            Row("completeness filter (Appendix L)", "sessions removed (< 0.8)", removed, scored,
                study="-", share=False)]


def kind_rows(kinds: KindChoice) -> list[Row]:
    """One row per detail type: its measured precision with n and Wilson interval, and in
    the study column whether it was scored and why."""
    rows = []
    for kind in KINDS:
        found = kinds.measured.get(kind)
        interval = found.interval if found else None
        rows.append(Row("detail types", kind, found.precision if found else None,
                        found.labelled if found else 0, interval.low if interval else None,
                        interval.high if interval else None, kinds.reason(kind)))
    return rows


def build(sessions: Sequence[SessionRecord], incomplete: int, kinds: KindChoice) -> Tables:
    """Every table of the module docstring."""
    readable = [s for s in sessions if "error" not in s.record]
    removed = sum(1 for s in readable if not s.record.get("kept"))
    tables = Tables(sessions=len(sessions), incomplete=incomplete,
                    unreadable=len(sessions) - len(readable), removed=removed,
                    scored_kinds=list(kinds.scored), kinds_named=kinds.named)
    tables.rows = [*position_rows(readable), *instruction_rows(readable), *ratio_rows(readable),
                   *recurring_rows(readable), *client_rows(readable),
                   *count_rows(readable, removed, len(readable)), *kind_rows(kinds)]
    return tables
