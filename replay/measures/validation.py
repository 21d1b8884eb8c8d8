"""How far the retention scores can be trusted: a hand-labelled sample of real references.

The validation set is a folder of real sessions with two label files written by reading them:

- `labels.tsv`: `session  position  kind  value  label  reason`, one line per sampled value of a
  boundary's recurring-detail reference, `label` `detail` (a detail of the work a reader of
  the summary could need) or `noise` (anything else), and why;
- `disorder.tsv`: `session  position  file  label  reason`, one line per written file a summary
  names, `label` `finished-shown-as-pending` or `not`.

The sample is fixed by rule, not by hand: at each boundary, the first `SAMPLE_PER_KIND` values of
each kind of the reference, in its order. `validate` recomputes the references with today's
rules, joins them with the labels and gives the precision per kind (the share of sampled values
labelled `detail`) and the disorder check's precision and recall against the labelled files. A
sampled value without a label is counted and listed, never guessed: when the rules change, the
sample may change, and the new values need labels before the figures mean anything.
"""

from __future__ import annotations

import csv
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from replay.core.errors import InputError
from replay.measures.chains import score_sessions
from replay.measures.details import KINDS
from replay.measures.retention import UNSCORED, Limits
from replay.measures.session_files import load_sessions

SAMPLE_PER_KIND = 3
LABELS = "labels.tsv"
DISORDER = "disorder.tsv"
PENDING_LABEL = "finished-shown-as-pending"


@dataclass(frozen=True)
class Sampled:
    """One sampled reference value."""

    session: str
    position: int
    kind: str
    value: str


@dataclass
class Precision:
    """Labelled values of one kind and how many of them are details."""

    labelled: int = 0
    details: int = 0

    @property
    def share(self) -> float | None:
        """details / labelled (None with nothing labelled)."""
        return self.details / self.labelled if self.labelled else None


@dataclass
class ValidationFigures:
    """The figures of a validation set (see the module docstring)."""

    sessions: int
    boundaries: int
    by_kind: dict[str, Precision]
    unlabelled: list[Sampled]
    flagged: list[tuple[str, int, str]] = field(default_factory=list)
    true_flags: int = 0
    candidates: int = 0
    positives: int = 0
    found_positives: int = 0
    unlabelled_flags: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def overall(self) -> Precision:
        """Every kind together."""
        return Precision(sum(p.labelled for p in self.by_kind.values()),
                         sum(p.details for p in self.by_kind.values()))

    @property
    def disorder_precision(self) -> float | None:
        """Flags labelled finished-shown-as-pending / flags (None without flags)."""
        return self.true_flags / len(self.flagged) if self.flagged else None

    @property
    def disorder_recall(self) -> float | None:
        """Labelled finished-shown-as-pending files the check flagged / all of them."""
        return self.found_positives / self.positives if self.positives else None


def read_tsv(path: Path, columns: int) -> list[list[str]]:
    """The rows of a tab-separated label file after its header, each with `columns` fields."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    rows = []
    for number, row in enumerate(csv.reader(lines[1:], delimiter="\t", quoting=csv.QUOTE_NONE),
                                 start=2):
        if not row:
            continue
        if len(row) != columns:
            raise InputError(f"{path}:{number}: needs {columns} tab-separated fields, "
                             f"has {len(row)}")
        rows.append(row)
    return rows


def sample_of(reference: dict[str, list[str]], session: str, position: int) -> list[Sampled]:
    """The sampled values of one boundary's reference."""
    return [Sampled(session, position, kind, value)
            for kind in KINDS for value in reference.get(kind, [])[:SAMPLE_PER_KIND]]


def validate(folder: Path, limits: Limits | None = None) -> ValidationFigures:
    """Recompute the references of the sessions in `folder` and join them with its labels."""
    sessions = load_sessions([folder])
    report = score_sessions(sessions, limits or Limits(kinds=KINDS))  # unscored kinds too
    labels = {(row[0], int(row[1]), row[2], row[3]): row[4]
              for row in read_tsv(folder / LABELS, 6)}
    by_kind = {kind: Precision() for kind in KINDS}
    unlabelled: list[Sampled] = []
    boundaries = 0
    result = ValidationFigures(len(sessions), 0, by_kind, unlabelled)
    pending = _disorder_labels(folder / DISORDER)
    result.positives = sum(label == PENDING_LABEL for label in pending.values())
    result.candidates = len(pending)
    for session in report.sessions:
        name = posixpath.basename(session.source)
        for compaction in session.compactions:
            boundaries += 1
            for sampled in sample_of(compaction.reference, name, compaction.position):
                label = labels.get((name, sampled.position, sampled.kind, sampled.value))
                if label is None:
                    unlabelled.append(sampled)
                    continue
                by_kind[sampled.kind].labelled += 1
                by_kind[sampled.kind].details += label == "detail"
            _count_flags(result, pending, name, compaction.position, compaction.disorder)
    result.boundaries = boundaries
    return result


def _disorder_labels(path: Path) -> dict[tuple[str, int, str], str]:
    return {(row[0], int(row[1]), row[2]): row[3] for row in read_tsv(path, 5)}


def _count_flags(result: ValidationFigures, labels: dict[tuple[str, int, str], str], session: str,
                 position: int, flags: Sequence[str]) -> None:
    for name in flags:
        key = (session, position, name)
        result.flagged.append(key)
        if key not in labels:
            result.unlabelled_flags.append(key)
        elif labels[key] == PENDING_LABEL:
            result.true_flags += 1
            result.found_positives += 1


def markdown_table(found: ValidationFigures) -> str:
    """docs/retention.md's table: precision per kind with n, then the disorder check's figures."""
    lines = ["| detail type | labelled values | details | precision |", "|---|---|---|---|"]
    scored = Precision(sum(p.labelled for k, p in found.by_kind.items() if k not in UNSCORED),
                       sum(p.details for k, p in found.by_kind.items() if k not in UNSCORED))
    for kind, precision in [*found.by_kind.items(), ("all scored types", scored),
                            ("all types", found.overall)]:
        if precision.labelled:
            name = f"{kind} (found, not scored)" if kind in UNSCORED else kind
            lines.append(f"| {name} | {precision.labelled} | {precision.details} | "
                         f"{_figure(precision.share)} |")
    lines += ["", "| disorder check | figure | n |", "|---|---|---|",
              f"| precision | {_figure(found.disorder_precision)} | {len(found.flagged)} flags |",
              f"| recall | {_figure(found.disorder_recall)} | {found.positives} of "
              f"{found.candidates} labelled files finished-shown-as-pending |"]
    return "\n".join(lines)


def _figure(share: float | None) -> str:
    return "-" if share is None else f"{share:.3f}"
