"""Loading and selecting SWE-bench records from real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.core.errors import InputError
from replay.instances.records import load_dataset, load_file, load_hub, select

from conftest import VERIFIED_JSONL, VERIFIED_PARQUET

STUDY_IDS = ["pytest-dev__pytest-10081", "sphinx-doc__sphinx-9230", "psf__requests-5414",
             "sympy__sympy-13551", "pydata__xarray-6721", "pytest-dev__pytest-7521",
             "pytest-dev__pytest-7571"]


def test_jsonl_and_parquet_give_the_same_records() -> None:
    from_jsonl = load_file(VERIFIED_JSONL)
    from_parquet = load_file(VERIFIED_PARQUET)
    assert len(from_jsonl) == len(from_parquet) == 500
    assert from_jsonl == from_parquet
    row = select(from_jsonl, ids=["psf__requests-5414"])[0]
    assert row.FAIL_TO_PASS == [
        "tests/test_requests.py::TestRequests::test_invalid_url[InvalidURL-http://.example.com]"]
    assert row.version == "2.26" and row.log_parser == "parse_log_requests"


def test_json_file_with_a_list_of_rows(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in VERIFIED_JSONL.read_text().splitlines()[:3]]
    path = tmp_path / "three.json"
    path.write_text(json.dumps(rows))
    assert [row.instance_id for row in load_dataset(str(path))] == [r["instance_id"] for r in rows]


def test_select_by_id_regex_and_slice() -> None:
    rows = load_file(VERIFIED_JSONL)
    chosen = select(rows, ids=STUDY_IDS)
    assert [row.instance_id for row in chosen] == STUDY_IDS
    pytest_rows = select(rows, pattern=r"^pytest-dev__")
    assert len(pytest_rows) == 19
    assert len(select(rows, pattern=r"^pytest-dev__", span="2:5")) == 3
    with pytest.raises(InputError, match="unknown instance id: nope__nope-1"):
        select(rows, ids=["psf__requests-5414", "nope__nope-1"])
    with pytest.raises(InputError, match="bad --slice"):
        select(rows, span="1-2")


def test_a_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    lines = VERIFIED_JSONL.read_text().splitlines()[:2]
    path = tmp_path / "broken.jsonl"
    path.write_text(lines[0] + "\n" + lines[1][:100] + "\n")
    with pytest.raises(InputError, match=r"broken.jsonl:2: malformed JSON line"):
        load_file(path)


def test_a_row_missing_fail_to_pass_names_instance_and_field(tmp_path: Path) -> None:
    row = json.loads(VERIFIED_JSONL.read_text().splitlines()[0])
    del row["FAIL_TO_PASS"]
    path = tmp_path / "missing.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(InputError, match=rf"instance {row['instance_id']}: field FAIL_TO_PASS: "
                                         "missing"):
        load_file(path)


def test_an_empty_fail_to_pass_list_is_refused(tmp_path: Path) -> None:
    row = json.loads(VERIFIED_JSONL.read_text().splitlines()[0])
    row["FAIL_TO_PASS"] = "[]"
    path = tmp_path / "empty.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(InputError, match="field FAIL_TO_PASS"):
        load_file(path)


def test_an_unreachable_hub_dataset_is_one_clear_error(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-replay-hf-home")
    with pytest.raises(InputError, match="cannot load Hugging Face dataset 'nobody/no-such-set'"):
        load_hub("nobody/no-such-set")
