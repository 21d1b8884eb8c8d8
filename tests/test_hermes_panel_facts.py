"""The Hermes panel's expected facts against the fixtures they come from: the values the upstream
fixtures plant, byte for byte; the study's two format corrections (payment's mapping as the
routing table writes it, the meeting notes' items without list markers); and FACTS.md, which
says whose each fact is, as the builder writes it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from replay.core.paths import instances_dir
from replay.instances.records import Instance, load_suite
from replay.measures.probes.files import leaves, load_probe_file

SUITE = "hermes-panel"
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
# The ground truth the upstream fixtures plant (their constants, or the strings their graders
# check), as the files named in each provenance.json write them.
UPSTREAM = {
    "server_error": {"request_id": "req-7f3d9", "timestamp": "2026-08-08T23:41:17Z"},
    "build_token": {"token": "tok_9f31c_middle"},
    "backup": {"repo": "sparks-data"},
    "refactor": {"call_sites": 3},
    "active_config": {"retry_limit": 7},
    "dependency_version": {"left_pad": "1.3.0"},
    "retry_backoff": {"base_ms": 250, "cap_ms": 30000},
    "meeting_notes": {"third_item": "rotate the API keys quarterly"},
    "targeted_edit": {"success_marker": "HANDLERS_OK_552"},
    "package_versions": {"versions": ["1.4.2", "0.9.7", "3.2.1"]},
    "checksum_anomaly": {"code": "X99Q"},
}
LIST_MARKER = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s")


def tasks() -> dict[str, tuple[Instance, dict, dict]]:
    """Each task by name: its instance, its one probe's expected facts, its provenance."""
    found = {}
    for instance in load_suite(SUITE).instances:
        folder = instances_dir() / SUITE / instance.instance_id
        provenance = json.loads((folder / "provenance.json").read_text())
        expected = load_probe_file(folder / "probes.json").probes[0].expected
        found[provenance["task"]] = (instance, expected, provenance)
    return found


def test_the_planted_facts_are_the_fixtures_own_byte_for_byte() -> None:
    found = tasks()
    for name, planted in UPSTREAM.items():
        _, expected, provenance = found[name]
        assert {field: expected[field] for field in planted} == planted, name
        assert sorted(provenance["planted"]) == sorted(planted), name
    assert all(record["rebuilt"] for name, (_, _, record) in found.items()
               if name not in UPSTREAM and name != "three_files")


def test_the_meeting_notes_items_have_no_list_markers_and_the_file_keeps_them() -> None:
    instance, expected, _ = tasks()["meeting_notes"]
    notes = next((instance.repo_files / "notes").iterdir()).read_text(encoding="utf-8")
    items = [line for line in notes.splitlines() if LIST_MARKER.match(line)]
    assert len(items) == 4  # the file keeps its markers, as upstream
    assert expected == {"third_item": items[2].removeprefix("- "),
                        "first_item": items[0].removeprefix("- ")}
    for _, facts, _ in tasks().values():  # and no expected string of the panel has one
        assert not [leaf for leaf in leaves(facts) if isinstance(leaf, str)
                    and LIST_MARKER.match(leaf)]


def test_payments_mapping_is_asked_as_the_routing_table_writes_it() -> None:
    instance, expected, _ = tasks()["payment"]
    table = (instance.repo_files / "config" / "providers.yaml").read_text()
    entries = re.findall(r"^  (\w+): \{provider: (\w+), account: ([\w-]+)\}$", table, re.M)
    routes = {region: account for region, _, account in entries}
    assert len(routes) == len(entries)  # one entry per region
    assert routes[expected["region"]] == expected["account"]
    assert [region for region, account in routes.items() if account == expected["account"]] == [
        expected["region"]]
    log = (instance.repo_files / "logs" / "payments.log").read_text()
    declined = [line for line in log.splitlines() if "declined" in line]
    assert len(declined) == 1
    fields = dict(part.split("=", 1) for part in declined[0].split() if "=" in part)
    assert (fields["order"], fields["region"], fields["amount"], fields["decline_code"]) == (
        expected["order"], expected["region"], expected["amount"], expected["decline_code"])


def test_facts_md_says_whose_each_fact_is_as_the_builder_writes_it() -> None:
    sys.path.insert(0, str(SCRIPTS))
    try:
        import build_hermes_panel
        text = build_hermes_panel.facts_text(build_hermes_panel.tasks())
    finally:
        sys.path.remove(str(SCRIPTS))
    assert (instances_dir() / SUITE / "FACTS.md").read_text() == text
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ")][1:]
    whose = {(row[0].removeprefix("| "), row[2]): row[4].removesuffix(" |") for row in rows}
    assert len(whose) == sum(len(facts) for _, facts, _ in tasks().values())
    assert whose[("server_error", "request_id")] == "planted: LOG_ERROR_REQ_ID"
    assert whose[("server_error", "status")] == "content"
    assert whose[("payment", "account")] == "rebuild"
