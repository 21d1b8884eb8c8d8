"""Which detail types the corpus tables score: those whose measured precision is at least 0.95.

Issue 35's rule: every scored type has a precision of at least 0.95 on values drawn at random
from the corpus and labelled by hand, or it is not scored. The labels ship with the package
(`labels.tsv` beside this module: `repository commit path position kind value label reason`,
`label` being `detail` or `noise`); `measured` reads them, `rule_kinds` applies the rule (a type
without a labelled value is not scored: nothing was measured), and `choice` says which types a
run of `replay retention --corpus` scores and why, for the tables to print.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from replay.measures.details import KINDS
from replay.measures.statistics import Interval, wilson

LABELS = Path(__file__).with_name("labels.tsv")
THRESHOLD = 0.95


@dataclass(frozen=True)
class KindPrecision:
    """One detail type's labelled values and how many of them were details."""

    kind: str
    labelled: int
    details: int

    @property
    def precision(self) -> float:
        """The share of its labelled values that were details."""
        return self.details / self.labelled

    @property
    def interval(self) -> Interval | None:
        """The 95% Wilson interval of the precision."""
        return wilson(self.details, self.labelled)


@dataclass(frozen=True)
class KindChoice:
    """The types a run scores, whether `--kinds` named them, and what the labels measured."""

    scored: tuple[str, ...]
    named: bool  # True: chosen by --kinds; False: by the 0.95 rule
    measured: dict[str, KindPrecision]

    def reason(self, kind: str) -> str:
        """Why `kind` is scored or not, in a few words."""
        found = self.measured.get(kind)
        passes = found is not None and found.precision >= THRESHOLD
        if self.named:
            verdict = "scored (--kinds)" if kind in self.scored else "not scored (--kinds)"
            rule = "passes" if passes else "fails"
            return f"{verdict}; the 0.95 rule {rule}"
        if kind in self.scored:
            return "scored (precision >= 0.95)"
        return "not scored (no labelled values)" if found is None else \
            "not scored (precision under 0.95)"


def measured(path: Path = LABELS) -> dict[str, KindPrecision]:
    """Each labelled type's precision, in the order of `KINDS`."""
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    found = {}
    for kind in KINDS:
        mine = [row for row in rows if row["kind"] == kind]
        if mine:
            found[kind] = KindPrecision(kind, len(mine),
                                        sum(row["label"] == "detail" for row in mine))
    return found


def rule_kinds(found: dict[str, KindPrecision]) -> tuple[str, ...]:
    """The types whose measured precision is at least `THRESHOLD`, in the order of `KINDS`."""
    return tuple(kind for kind in KINDS
                 if kind in found and found[kind].precision >= THRESHOLD)


def choice(named: tuple[str, ...] | None, path: Path = LABELS) -> KindChoice:
    """The types to score: `named` (from `--kinds`) when given, else the rule's."""
    found = measured(path)
    if named is not None:
        return KindChoice(named, True, found)
    return KindChoice(rule_kinds(found), False, found)
