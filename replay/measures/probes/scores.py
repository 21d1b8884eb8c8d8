"""Probe scores: per history and method, then per method and cohort.

Field accuracy is averaged over the fields of an answer, the answers of a generation (every
probe, every sample), the generations of a history, then over histories, each counting equally;
the all-fields-correct rate likewise. A planned answer that failed (its summary or its call)
counts zero and is listed. Input tokens are the model's own count for each answer, averaged the
same way over the answers that were had. The reduction against Full is 1 - tokens / Full's
tokens, per history, averaged over histories; each history where a method is not strictly
shorter than Full is listed, and a row whose reduction is not positive is reported as not
shorter, never as compression.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from replay.measures.probes.answering import FULL, Answer
from replay.measures.statistics import Interval, bootstrap_mean


def mean(values: Iterable[float]) -> float | None:
    """The mean, or None for no values."""
    found = list(values)
    return sum(found) / len(found) if found else None


@dataclass(frozen=True)
class HistoryScore:
    """One method on one history."""

    instance_id: str
    method: str
    cohort: str
    accuracy: float
    all_correct: float
    input_tokens: float | None
    generations: int
    answers: int
    failed: int
    malformed: int = 0  # replies that were not the JSON asked (they score zero)


@dataclass(frozen=True)
class Row:
    """One method on one cohort: `n` histories."""

    method: str
    cohort: str
    n: int
    answers: int
    failed: int
    accuracy: float
    all_correct: float
    input_tokens: float | None
    reduction: float | None
    not_shorter: tuple[str, ...] = ()
    malformed: int = 0
    accuracy_interval: Interval | None = None  # 95% bootstrap over the histories
    all_correct_interval: Interval | None = None


def history_scores(answers: list[Answer], cohorts: dict[str, str]) -> list[HistoryScore]:
    """The score of every (history, method), in the order the answers came."""
    grouped: dict[tuple[str, str], dict[int, list[Answer]]] = {}
    for answer in answers:
        key = (answer.instance_id, answer.method)
        grouped.setdefault(key, {}).setdefault(answer.generation, []).append(answer)
    scores = []
    for (instance_id, method), by_generation in grouped.items():
        runs = list(by_generation.values())
        tokens = [mean(a.input_tokens for a in run if a.input_tokens is not None) for run in runs]
        scores.append(HistoryScore(
            instance_id, method, cohorts[instance_id],
            mean(mean(a.accuracy for a in run) or 0.0 for run in runs) or 0.0,
            mean(mean(float(a.all_correct) for a in run) or 0.0 for run in runs) or 0.0,
            mean(t for t in tokens if t is not None), len(runs),
            sum(len(run) for run in runs), sum(a.error is not None for run in runs for a in run),
            sum(a.grade is not None and a.grade.malformed for run in runs for a in run)))
    return scores


def rows(scores: list[HistoryScore], methods: list[str]) -> list[Row]:
    """One row per method and cohort, methods in the order given, cohorts as first seen."""
    full = {s.instance_id: s.input_tokens for s in scores if s.method == FULL}
    cohorts = list(dict.fromkeys(s.cohort for s in scores))
    found = []
    for method in methods:
        for cohort in cohorts:
            group = [s for s in scores if s.method == method and s.cohort == cohort]
            if not group:
                continue
            paired = [(s, full[s.instance_id]) for s in group
                      if s.input_tokens is not None and full.get(s.instance_id)]
            found.append(Row(
                method, cohort, len(group), sum(s.answers for s in group),
                sum(s.failed for s in group), mean(s.accuracy for s in group) or 0.0,
                mean(s.all_correct for s in group) or 0.0,
                mean(s.input_tokens for s in group if s.input_tokens is not None),
                None if method == FULL else mean(1 - s.input_tokens / f for s, f in paired),
                () if method == FULL else tuple(s.instance_id for s, f in paired
                                                if s.input_tokens >= f),
                sum(s.malformed for s in group), bootstrap_mean([s.accuracy for s in group]),
                bootstrap_mean([s.all_correct for s in group])))
    return found
