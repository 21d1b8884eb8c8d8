"""The study's scoring rules on hand-made answers to the ReMe panel's own probes: type-strict
equality (1, true and 1.0 differ), order, missing and malformed fields, payment's one order-free
field, and the averaging order (fields within an answer, answers within a generation,
generations within a task, then tasks equally, failures zero in the denominator)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replay.core.paths import instances_dir
from replay.instances.records import load_suite
from replay.measures.probes.answering import Answer
from replay.measures.probes.files import Probe, load_probe_file
from replay.measures.probes.grading import grade
from replay.measures.probes.scores import history_scores, rows


def probe(task: str) -> Probe:
    """The panel's probe of `task`."""
    [instance] = [i for i in load_suite("reme").instances
                  if i.instance_id == f"reme__{task.replace('_', '-')}-1"]
    return load_probe_file(instances_dir() / "reme" / instance.instance_id / "probes.json"
                           ).probes[0]


def wrong_fields(task: str, **changes: Any) -> list[str]:
    """The fields graded wrong when the exact answer has `changes` (None drops a field)."""
    facts = dict(probe(task).expected) | changes
    facts = {name: value for name, value in facts.items() if value is not None}
    found = grade(probe(task), json.dumps({"facts": facts}))
    return [name for name, right in found.fields.items() if not right]


def test_the_exact_answer_is_all_correct() -> None:
    for task in ("payment", "checkout_504", "targeted_edit", "package_versions"):
        assert wrong_fields(task) == [], task


def test_1_true_and_1_0_are_three_answers() -> None:
    assert wrong_fields("payment", amount_minor=12900.0) == ["amount_minor"]
    assert wrong_fields("payment", first_attempt_committed=1) == ["first_attempt_committed"]
    assert wrong_fields("payment", first_attempt_committed="true") == ["first_attempt_committed"]
    assert wrong_fields("checkout_504", rollback_fixed=0) == ["rollback_fixed"]
    assert wrong_fields("server_error", status="502") == ["status"]
    assert wrong_fields("targeted_edit", original_timeouts={
        "fast_handler": 10, "slow_handler": 10.0, "medium_handler": 10}) == ["original_timeouts"]


def test_only_paymentss_no_retry_statuses_ignore_order() -> None:
    assert wrong_fields("payment", no_retry_http_statuses=[422, 402]) == []
    assert wrong_fields("payment", no_retry_http_statuses=[402]) == ["no_retry_http_statuses"]
    assert wrong_fields("payment", attempt_keys=["pay-b", "pay-a"]) == ["attempt_keys"]
    assert wrong_fields("refactor", functions=["fetch_c", "fetch_b", "fetch_a"]) == ["functions"]


def test_the_preflight_formats_score_zero() -> None:
    as_array = [["timeout_then_success", 2], ["validation_422", 1], ["three_timeouts", 3]]
    assert wrong_fields("payment", regression_attempt_counts=as_array) == [
        "regression_attempt_counts"]
    assert wrong_fields("meeting_notes", third="- rotate the API keys quarterly") == ["third"]


def test_missing_extra_and_malformed() -> None:
    assert wrong_fields("backup", repo=None) == ["repo"]
    assert wrong_fields("backup", note="ignored") == []  # a field not asked for is ignored
    for reply in ('{"repo": "sparks-data"}', "sparks-data", '{"facts": ["sparks-data"]}'):
        found = grade(probe("backup"), reply)
        assert found.malformed and found.accuracy == 0.0, reply


def answer(task: str, generation: int, right: int, of: int, error: str | None = None) -> Answer:
    from replay.measures.probes.grading import AnswerGrade

    fields = {f"f{i}": i < right for i in range(of)}
    return Answer(task, "s", generation, "p", 0, None if error else AnswerGrade(fields), 100,
                  error=error)


def test_the_averaging_order() -> None:
    answers = [  # payment: 10 fields; backup: 3
        answer("payment", 0, 10, 10), answer("payment", 0, 5, 10),   # generation 0: 0.75
        answer("payment", 1, 0, 10, error="summary: invalid"),      # generation 1 failed: 0
        answer("payment", 1, 0, 10, error="summary: invalid"),
        answer("payment", 2, 10, 10), answer("payment", 2, 10, 10),  # generation 2: 1.0
        *(answer("backup", g, 1, 3) for g in range(3) for _ in range(2)),  # 1/3 throughout
    ]
    scores = {s.instance_id: s for s in history_scores(answers, {"payment": "primary",
                                                                 "backup": "primary"})}
    assert scores["payment"].accuracy == pytest.approx((0.75 + 0 + 1.0) / 3)
    assert scores["backup"].accuracy == pytest.approx(1 / 3)
    [row] = rows(list(scores.values()), ["s"])
    # tasks count equally: not the 75 + 18 pooled fields, not the 12 pooled answers
    assert row.accuracy == pytest.approx(((0.75 + 1.0) / 3 + 1 / 3) / 2)
    assert row.failed == 2 and row.answers == 12
