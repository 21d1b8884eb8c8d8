"""Exports of a probe run: one JSON document with every answer, and CSV tables."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from replay.core.files import write_atomic
from replay.measures.probes.answering import Answer, Context
from replay.measures.probes.scores import HistoryScore, Row
from replay.measures.statistics import Interval

ROW_COLUMNS = ["method", "cohort", "n", "answers", "failed", "not_json", "field_accuracy",
               "field_accuracy_low", "field_accuracy_high", "all_correct", "all_correct_low",
               "all_correct_high", "input_tokens", "reduction", "not_shorter"]
ANSWER_COLUMNS = ["instance", "method", "generation", "probe", "sample", "accuracy",
                  "all_correct", "malformed", "input_tokens", "fields", "error"]


def answer_record(answer: Answer) -> dict[str, Any]:
    """One answer as exported: where it was asked, its grade per field, its tokens and reply."""
    return {"instance": answer.instance_id, "method": answer.method,
            "generation": answer.generation, "probe": answer.probe, "sample": answer.sample,
            "accuracy": answer.accuracy, "all_correct": answer.all_correct,
            "malformed": answer.grade.malformed if answer.grade else None,
            "fields": answer.grade.fields if answer.grade else {},
            "input_tokens": answer.input_tokens, "reply": answer.reply, "error": answer.error}


def to_json(about: dict[str, Any], rows: list[Row], scores: list[HistoryScore],
            contexts: list[Context], answers: list[Answer]) -> dict[str, Any]:
    """The whole probe run as one JSON document."""
    return {**about, "rows": [asdict(row) for row in rows],
            "histories": [asdict(score) for score in scores],
            "contexts": [{"instance": c.instance_id, "method": c.method,
                          "generation": c.generation, "summary": c.summary, "error": c.error,
                          "details": c.details, "length": c.length} for c in contexts],
            "failures": [answer_record(a) for a in answers if a.error is not None],
            "answers": [answer_record(a) for a in answers]}


def _csv(columns: list[str], records: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buffer.getvalue()


def _ends(name: str, interval: Interval | None) -> dict[str, float | None]:
    """The two ends of a 95% interval as CSV columns (empty for fewer than two histories)."""
    return {f"{name}_low": interval.low if interval else None,
            f"{name}_high": interval.high if interval else None}


def write(folder: Path, about: dict[str, Any], rows: list[Row], scores: list[HistoryScore],
          contexts: list[Context], answers: list[Answer]) -> list[Path]:
    """Write probes.json, probes.csv (the table) and answers.csv into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    document = to_json(about, rows, scores, contexts, answers)
    row_records = [{**asdict(row), "field_accuracy": row.accuracy, "not_json": row.malformed,
                    **_ends("field_accuracy", row.accuracy_interval),
                    **_ends("all_correct", row.all_correct_interval),
                    "not_shorter": " ".join(row.not_shorter)} for row in rows]
    answer_records = [{**record, "fields": " ".join(f"{name}={int(ok)}" for name, ok
                                                    in record["fields"].items())}
                      for record in document["answers"]]
    files = {"probes.json": json.dumps(document, indent=1, ensure_ascii=False),
             "probes.csv": _csv(ROW_COLUMNS, row_records),
             "answers.csv": _csv(ANSWER_COLUMNS, answer_records)}
    return [write_atomic(folder / name, text) for name, text in files.items()]
