"""The frame of a study's paper tables: the two runs, the paper names of their backbone
columns, and a table as the paper prints it (see `replay.report.paper`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from replay.core.vocab import PRE_PASS, Arm, Confirmation, Label
from replay.records.cell import CellId
from replay.records.outcome import Outcome
from replay.report.contents import Report
from replay.report.paper_figures import Beside, published
from replay.sweep.labels import could_not_run


@dataclass
class PaperTable:
    """One of the paper's tables as a run fills it, with the published figures beside it."""

    slug: str  # the CSV's (and figure's) file name
    title: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]]
    beside: list[Beside] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Study:
    """The two runs of a study, and the paper model each backbone column stands for."""

    backbones: Report
    prompts: Report
    paper_names: dict[str, str]  # backbone summarizer -> the paper's model name

    def column(self, summarizer: str) -> str:
        """A backbone column's name as the run's report shows it, and the paper model it stands
        for."""
        paper = self.paper_names.get(summarizer)
        shown = self.backbones.shown(summarizer)
        return f"{shown} ({paper})" if paper else shown

    def by_paper(self, name: str) -> str | None:
        """The summarizer that stands for the paper's model `name` (None: not run)."""
        return next((s for s, paper in self.paper_names.items() if paper == name), None)


def first_code(outcome: Outcome) -> str:
    """The first-round code of a pair: P or D inside the PRE-pass comparison, X excluded by
    validation, E error, `-` outside the comparison."""
    if outcome.label in PRE_PASS:
        return "P" if outcome.label == Label.PRESERVED else "D"
    return {Label.EXCLUDED: "X", Label.ERROR: "E"}.get(outcome.label, "-")


def pre_verdicts(report: Report) -> dict[str, bool | None]:
    """Each instance's seed-0 PRE: passed, failed, or None (not run, could not run: its first
    request refused, or excluded)."""
    found = {}
    for instance in report.plan.instances:
        cell = report.cells.get(CellId(instance, Arm.PRE, "", 0))
        found[instance] = None if cell is None or could_not_run(cell) else cell.passed
    return found


def is_stable(outcome: Outcome) -> bool:
    """Whether a pair's damage is confirmed stable."""
    return outcome.label == Label.DAMAGED and outcome.confirmation == Confirmation.STABLE


def missing(study: Study) -> list[str]:
    """The backbones the paper names that the study has not run."""
    names = [row["name"] for row in published()["backbone"]]
    return [name for name in names if study.by_paper(name) is None]
