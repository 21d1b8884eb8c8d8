"""A history's boundary is a typed record: every bundled history reads it and writes back the
fields its file holds, in their order and nothing more, and a boundary with a field no boundary
has is refused as bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.core.errors import InputError
from replay.core.paths import instances_dir
from replay.histories.records import history_record, load_history_file
from replay.records.history import Boundary

BUNDLED = sorted(instances_dir().glob("**/history.json"))


def test_every_bundled_history_writes_its_boundary_back_as_its_file_has_it() -> None:
    assert len(BUNDLED) >= 30
    for path in BUNDLED:
        history = load_history_file(path)
        written = json.loads(json.dumps(history_record(history)))["boundary"]
        kept = json.loads(path.read_text(encoding="utf-8"))["boundary"]
        assert list(written.items()) == list(kept.items()), path
        assert isinstance(history.boundary, Boundary) and history.boundary.rule == kept["rule"]


def test_a_boundary_with_an_unknown_field_is_bad_input(tmp_path: Path) -> None:
    source = BUNDLED[0]
    data = json.loads(source.read_text(encoding="utf-8"))
    data["boundary"]["stpe"] = 3
    (tmp_path / "snapshot.diff").write_bytes((source.parent / "snapshot.diff").read_bytes())
    (tmp_path / "history.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="not a valid history"):
        load_history_file(tmp_path / "history.json")


def test_a_boundary_keeps_only_the_fields_it_was_given() -> None:
    assert Boundary(rule="steps:2", step=2).record() == {"rule": "steps:2", "step": 2}
    assert Boundary().record() == {}
