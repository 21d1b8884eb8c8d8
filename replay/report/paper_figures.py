"""The paper's published figures (`paper.toml`) and how a run's figure is set beside one.

A run's rate k/n carries its 95% Wilson interval; the paper's value lies inside it or not. A
paper figure whose model (or instance) the user has not run is `not run`, never filled in.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from replay.measures.statistics import rate_text, wilson

NOT_RUN = "not run"


@cache
def published() -> dict[str, Any]:
    """The paper's figures, as `paper.toml` holds them."""
    return tomllib.loads(resources.files("replay.report").joinpath("paper.toml").read_text())


@dataclass(frozen=True)
class Beside:
    """One published figure beside the run's: what it is, where the paper prints it, the
    paper's value, the run's (with its interval) and whether the paper's lies inside."""

    figure: str
    section: str
    paper: str
    run: str
    inside: str  # "yes", "no", or "-" (not run, or nothing to hold an interval against)

    def row(self) -> tuple[str, str, str, str, str]:
        """The comparison as a table row."""
        return (self.figure, self.run, self.paper, self.inside, self.section)


BESIDE_HEADER = ("figure", "this run (95% interval)", "paper", "paper inside?", "paper section")


def fraction(part: int, whole: int) -> str:
    """`19/22 (86.4%)`."""
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else f"{part}/0"


def rate_beside(figure: str, section: str, run: tuple[int, int] | None,
                paper: tuple[int, int]) -> Beside:
    """A rate of the run (k, n; None when not run) beside the paper's k/n: inside when the
    paper's rate lies in the run's Wilson interval."""
    shown = fraction(*paper)
    if run is None:
        return Beside(figure, section, shown, NOT_RUN, "-")
    interval = wilson(*run)
    if interval is None:
        return Beside(figure, section, shown, rate_text(*run), "-")
    value = paper[0] / paper[1]
    return Beside(figure, section, shown, rate_text(*run),
                  "yes" if interval.low <= value <= interval.high else "no")


def share_beside(figure: str, section: str, run: tuple[int, int] | None,
                 paper: float, paper_text: str) -> Beside:
    """A rate of the run beside a published share (a percentage printed without its k/n)."""
    if run is None:
        return Beside(figure, section, paper_text, NOT_RUN, "-")
    interval = wilson(*run)
    inside = "-" if interval is None else (
        "yes" if interval.low <= paper <= interval.high else "no")
    return Beside(figure, section, paper_text, rate_text(*run), inside)


def list_beside(figure: str, section: str, run: list[str] | None, paper: list[str]) -> Beside:
    """A set of instances beside the paper's (`same` or `differs` in the last column)."""
    shown = ", ".join(paper)
    if run is None:
        return Beside(figure, section, shown, NOT_RUN, "-")
    return Beside(figure, section, shown, ", ".join(run) or "none",
                  "same" if sorted(run) == sorted(paper) else "differs")
