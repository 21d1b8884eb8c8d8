"""Fact probes: the grader's type rules, probe files, the bundled probes, and the averaging."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.core.errors import InputError
from replay.histories.records import bundled_history
from replay.instances.records import load_suite
from replay.measures.probes.answering import FULL, Answer
from replay.measures.probes.files import (
    Probe,
    bundled_probes,
    evidence_problems,
    load_probe_file,
)
from replay.measures.probes.grading import grade, same, same_field
from replay.measures.probes.scores import history_scores, rows

PROBE = Probe.model_validate({
    "id": "p", "question": "What happened?",
    "fields": {"count": {"type": "integer", "description": "how many"},
               "ok": {"type": "boolean", "description": "whether"},
               "ratio": {"type": "number", "description": "how much"},
               "hosts": {"type": "array", "description": "which", "order_free": True},
               "steps": {"type": "array", "description": "in order"},
               "where": {"type": "object", "description": "where exactly"}},
    "expected": {"count": 1, "ok": True, "ratio": 1.0, "hosts": ["a", "b"],
                 "steps": ["x", "y"], "where": {"file": "a.py", "line": 3, "tags": [1, 2]}}})


def reply(**facts: object) -> str:
    return json.dumps({"facts": {**PROBE.expected, **facts}})


def test_integers_booleans_and_floats_are_three_different_answers() -> None:
    assert same(1, 1) and not same(1, True) and not same(1, 1.0)
    assert same(True, True) and not same(True, 1) and not same(1.0, 1)
    assert same(1.0, 1.0) and not same("1", 1) and same(None, None)
    graded = grade(PROBE, reply(count=True, ok=1, ratio=1))
    assert graded.fields == {"count": False, "ok": False, "ratio": False, "hosts": True,
                             "steps": True, "where": True}
    assert graded.accuracy == 0.5 and not graded.all_correct


def test_order_free_fields_ignore_order_and_ordered_ones_do_not() -> None:
    assert grade(PROBE, reply(hosts=["b", "a"], steps=["x", "y"])).all_correct
    assert not grade(PROBE, reply(steps=["y", "x"])).fields["steps"]
    assert not grade(PROBE, reply(hosts=["a", "a"])).fields["hosts"]  # a multiset, not a set
    assert not same_field([1, 2], [2, 1.0], order_free=True)
    assert not same_field([1, 2], [1, 2, 2], order_free=True)


def test_nested_objects_match_recursively_and_strictly() -> None:
    assert grade(PROBE, reply(where={"line": 3, "file": "a.py", "tags": [1, 2]})).all_correct
    for where in ({"file": "a.py", "line": 3.0, "tags": [1, 2]},
                  {"file": "a.py", "line": 3, "tags": [2, 1]},
                  {"file": "a.py", "line": 3, "tags": [1, 2], "extra": 0},
                  {"file": "a.py", "line": 3}, "a.py:3"):
        assert not grade(PROBE, reply(where=where)).fields["where"], where


def test_missing_and_malformed_fields_score_zero() -> None:
    facts = dict(PROBE.expected)
    del facts["count"]
    graded = grade(PROBE, json.dumps({"facts": facts, "note": "extra keys are ignored"}))
    assert graded.fields["count"] is False and sum(graded.fields.values()) == 5
    assert not graded.malformed
    for text in ("count: 1", json.dumps(PROBE.expected), '{"facts": [1]}', "",
                 json.dumps({"facts": PROBE.expected}) + " trailing words"):
        malformed = grade(PROBE, text)
        assert malformed.malformed and malformed.accuracy == 0, text
    fenced = "```json\n" + reply() + "\n```"
    assert grade(PROBE, fenced).all_correct


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("change, message", [
    ({"cohort": ""}, "cohort"),
    ({"history": "abc"}, "history"),
    ({"probes": []}, "probes"),
    ({"probes": [{"id": "p", "question": "q", "fields": {"n": {"type": "integer",
                  "description": "n"}}, "expected": {"n": True}}]}, "is bool, not integer"),
    ({"probes": [{"id": "p", "question": "q", "fields": {"n": {"type": "number",
                  "description": "n"}}, "expected": {"n": 1}}]}, "is int, not number"),
    ({"probes": [{"id": "p", "question": "q", "fields": {"n": {"type": "string",
                  "description": "n"}}, "expected": {"m": "x"}}]}, "expected names"),
    ({"probes": [{"id": "p", "question": "q", "fields": {"n": {"type": "string",
                  "description": "n", "order_free": True}}, "expected": {"n": "x"}}]},
     "order_free applies to arrays only"),
])
def test_a_malformed_probe_file_is_one_line_of_bad_input(tmp_path: Path, change: dict,
                                                         message: str) -> None:
    good = {"instance_id": "i", "history": "0" * 64, "cohort": "primary",
            "probes": [PROBE.model_dump(exclude_defaults=True)]}
    load_probe_file(write(tmp_path / "good.json", good))
    with pytest.raises(InputError, match=message) as caught:
        load_probe_file(write(tmp_path / "bad.json", {**good, **change}))
    assert "\n" not in str(caught.value)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(InputError, match="malformed JSON"):
        load_probe_file(tmp_path / "broken.json")


@pytest.mark.parametrize("suite", ["probe-panel", "demo"])
def test_every_bundled_probe_names_its_history_and_needs_its_tool_outputs(suite: str) -> None:
    cohorts = []
    for instance in load_suite(suite).instances:
        probes, history = bundled_probes(instance), bundled_history(instance)
        assert probes is not None and history is not None
        assert probes.history == history.content_id()
        assert evidence_problems(probes, history) == []
        cohorts.append(probes.cohort)
    if suite == "probe-panel":
        assert len(cohorts) >= 10 and cohorts.count("primary") == 7 and "control" in cohorts


def answer(instance: str, method: str, generation: int, right: int, of: int = 2,
           tokens: int | None = 100, error: str | None = None) -> Answer:
    from replay.measures.probes.grading import AnswerGrade

    fields = {f"f{i}": i < right for i in range(of)}
    return Answer(instance, method, generation, "p", 0, None if error else AnswerGrade(fields),
                  None if error else tokens, error=error)


def test_scores_average_fields_answers_generations_then_histories() -> None:
    answers = [
        answer("h1", FULL, 0, 2, tokens=1000), answer("h2", FULL, 0, 2, tokens=400),
        # h1: generation 0 has answers 1/2 and 2/2 (0.75), generation 1 failed (0): 0.375
        answer("h1", "s", 0, 1, tokens=100), answer("h1", "s", 0, 2, tokens=300),
        answer("h1", "s", 1, 0, error="summary: ModelTransientError: down"),
        answer("h1", "s", 1, 0, error="summary: ModelTransientError: down"),
        # h2: one generation, 0/2 and 2/2: 0.5; its 500 tokens are not shorter than Full's 400
        answer("h2", "s", 0, 0, tokens=500), answer("h2", "s", 0, 2, tokens=500),
    ]
    scores = history_scores(answers, {"h1": "primary", "h2": "primary"})
    by = {(s.instance_id, s.method): s for s in scores}
    assert by[("h1", "s")].accuracy == 0.375 and by[("h1", "s")].all_correct == 0.25
    assert by[("h1", "s")].input_tokens == 200 and by[("h1", "s")].failed == 2
    (full, method) = rows(scores, [FULL, "s"])
    assert (full.accuracy, full.reduction, full.n) == (1.0, None, 2)
    assert method.accuracy == (0.375 + 0.5) / 2 and method.answers == 6 and method.failed == 2
    assert method.reduction == pytest.approx(((1 - 200 / 1000) + (1 - 500 / 400)) / 2)
    assert method.not_shorter == ("h2",)
