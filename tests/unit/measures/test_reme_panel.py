"""The ReMe panel (instances/reme) against the study's own text: every task's initial query,
cohort and expected facts, read from the study's table in ../shared/seeds/, field for field and
type for type; the two format corrections; provenance; the read-only histories."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from replay.core.paths import instances_dir
from replay.instances.records import load_suite
from replay.measures.probes.files import load_probe_file

from paths import ROOT

SUITE = "reme"
SEED = Path("shared") / "seeds" / "000_bed66b4c9549add0.txt"
HEADER = "ID\tInitial query\tExpected facts\tCohort"
LIST_MARKER = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s")


def study_table() -> list[tuple[str, str, str, str]]:
    """The study's table rows: id, initial query, expected facts (JSON text), cohort."""
    root = ROOT
    found = [parent / SEED for parent in root.parents if (parent / SEED).is_file()]
    assert found, f"the study's text is not at ../{SEED} (nor further up)"
    lines = found[0].read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        task, query, facts, cohort = line.split("\t")
        rows.append((task, query, facts, cohort))
    return rows


def panel() -> dict[str, tuple[Any, dict[str, Any], Any]]:
    """Each task of the suite by its study id: instance, provenance, probe set."""
    found = {}
    for instance in load_suite(SUITE).instances:
        folder = instances_dir() / SUITE / instance.instance_id
        provenance = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
        found[provenance["task"]] = (instance, provenance, load_probe_file(folder / "probes.json"))
    return found


def same_types(expected: Any, got: Any) -> bool:
    """Recursive type-for-type equality (bool is not int, int is not float)."""
    if type(expected) is not type(got):
        return False
    if isinstance(expected, dict):
        return list(expected) == list(got) and all(same_types(v, got[k])
                                                   for k, v in expected.items())
    if isinstance(expected, list):
        return len(expected) == len(got) and all(map(same_types, expected, got))
    return bool(expected == got)


def test_every_task_is_the_studys_query_cohort_and_facts_byte_for_byte() -> None:
    rows, found = study_table(), panel()
    assert len(rows) == 14
    assert [row[0] for row in rows] == list(found)  # the study's order
    for task, query, facts, cohort in rows:
        instance, provenance, probes = found[task]
        assert instance.problem_statement == query, task
        assert provenance["query"] == query and provenance["study_cohort"] == cohort, task
        assert probes.cohort == ("primary" if cohort == "Primary candidate" else "control"), task
        [probe] = probes.probes
        assert json.dumps(probe.expected, ensure_ascii=False) == facts, task  # byte for byte
        assert same_types(json.loads(facts), probe.expected), task
        assert list(probe.fields) == list(json.loads(facts)), task
    assert [t for t, (_, _, p) in found.items() if p.cohort == "primary"] == [
        "payment", "checkout_504", "server_error", "build_token"]


def test_same_types_tells_1_from_true_from_1_0() -> None:
    assert same_types({"a": 1}, {"a": 1}) and not same_types({"a": 1}, {"a": True})
    assert not same_types({"a": 1}, {"a": 1.0}) and not same_types([1, 2], [2, 1])


def test_the_two_format_corrections_are_in_the_follow_ups_not_in_the_facts() -> None:
    found = panel()
    payment = found["payment"][2].probes[0]
    assert "named JSON mapping" in payment.question
    assert payment.fields["regression_attempt_counts"].type == "object"
    assert [n for n, f in payment.fields.items() if f.order_free] == ["no_retry_http_statuses"]
    notes_instance, _, notes = found["meeting_notes"]
    assert "without its list marker" in notes.probes[0].question
    text = next((notes_instance.repo_files / "notes").iterdir()).read_text(encoding="utf-8")
    bullets = [line[2:] for line in text.splitlines() if LIST_MARKER.match(line)]
    assert bullets[2] == notes.probes[0].expected["third"] and len(bullets) == 4
    others = [p for t, (_, _, s) in found.items() if t != "payment" for p in s.probes]
    assert not [f for p in others for f in p.fields.values() if f.order_free]


def test_provenance_names_the_upstream_file_or_marks_the_rebuild() -> None:
    for task, (_, provenance, _) in panel().items():
        assert provenance["source_sha256"], task
        if task in ("payment", "checkout_504"):
            assert provenance["rebuilt"] is True and provenance["upstream"] is None
            continue
        upstream = provenance["upstream"]
        assert provenance["rebuilt"] is False and upstream["license"] == "MIT"
        assert re.fullmatch(r"[0-9a-f]{40}", upstream["commit"]), task
        assert upstream["repository"].endswith("/hermes-agent") and upstream["path"], task
        assert upstream["study_commit"] == "30463589eb54fa0f48724594cc0e98e6b995729b"


def test_histories_are_read_only_and_stop_before_any_report() -> None:
    for task, (instance, _, probes) in panel().items():
        folder = instances_dir() / SUITE / instance.instance_id
        history = json.loads((folder / "history.json").read_text(encoding="utf-8"))
        assert (folder / "snapshot.diff").read_bytes() == b"", task  # no file modified
        calls = [c["function"] for m in history["messages"] for c in m.get("tool_calls") or []]
        assert calls and all(c["name"] in ("read_file", "bash") for c in calls), task
        assert all("find . -type f" in c["arguments"] for c in calls if c["name"] == "bash")
        assert history["messages"][-1]["role"] == "tool", task  # no final report
        words = " ".join(m.get("content") or "" for m in history["messages"]
                         if m["role"] == "assistant")
        assert probes.probes[0].question not in json.dumps(history), task
        assert not [v for v in probes.probes[0].expected.values()
                    if isinstance(v, str) and len(v) > 3 and v in words], task
