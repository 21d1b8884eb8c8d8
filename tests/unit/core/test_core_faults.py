"""Faults are records: made from the exception that was raised, stored as JSON and read back
unchanged, printed as the line cells always printed, and read back from the error lines that
stores written before faults were records keep."""

from __future__ import annotations

import json

import pytest

from replay.core.errors import EnvironmentFault, Fault, Halt, InputError
from replay.core.vocab import Arm, FaultKind, Label


def raised(exc: BaseException) -> BaseException:
    """`exc` as raised: with the traceback of the frame that raised it."""
    try:
        raise exc
    except BaseException as caught:
        return caught


def test_a_fault_knows_whose_it_is_and_keeps_its_traceback() -> None:
    harness = Fault.of(raised(EnvironmentFault("the container vanished")))
    assert (harness.kind, harness.name, harness.message) == (
        FaultKind.HARNESS, "EnvironmentFault", "the container vanished")
    assert "raise exc" in harness.traceback
    assert harness.traceback.rstrip().endswith(
        "replay.core.errors.EnvironmentFault: the container vanished")
    assert Fault.of(raised(InputError("no such file")), "summarizer").kind is FaultKind.INPUT
    assert Fault.of(raised(KeyError("x"))).kind is FaultKind.BUG
    assert Fault.of(raised(Halt("key refused"))).kind is FaultKind.BUG
    assert Fault.of(ValueError("never raised")).traceback == ""


def test_a_fault_prints_the_line_cells_printed() -> None:
    fault = Fault.of(raised(InputError("bad prompt")), "summarizer")
    assert fault.text() == "input: InputError: summarizer: bad prompt"
    assert fault.detail == "summarizer: bad prompt"
    assert Fault(FaultKind.HARNESS, "", "the tests timed out").text() == \
        "harness: the tests timed out"
    assert Fault.of(raised(StopIteration())).text() == "bug: StopIteration: "


def test_a_stored_fault_reads_back_equal() -> None:
    fault = Fault.of(raised(EnvironmentFault("crashed: exit 137")), "summarizer")
    stored = json.loads(json.dumps(fault.to_json()))
    assert Fault.from_json(stored) == fault
    assert stored["kind"] == "harness" and stored["stage"] == "summarizer"
    with pytest.raises(ValueError):
        Fault.from_json({**stored, "kind": "nobody"})


@pytest.mark.parametrize("line", [
    "input: InputError: summarizer: unknown prompt 'x': use claude-code",
    "harness: EnvironmentFault: exec failed (exit 1): boom",
    "bug: KeyError: 'messages'",
    "bug: StopIteration: ",
    "harness: the tests timed out after 5 s, shorter than the 9 s the gold patch's run took",
    "harness: ModelTransientError: agent request: HTTP 503 after 3 attempts",
])
def test_old_error_lines_read_back_as_the_same_line(line: str) -> None:
    fault = Fault.from_text(line)
    assert fault.text() == line
    assert Fault.from_json(fault.to_json()) == fault


def test_old_lines_split_into_their_parts() -> None:
    fault = Fault.from_text("input: InputError: summarizer: bad: it is")
    assert (fault.kind, fault.name, fault.stage, fault.message) == (
        FaultKind.INPUT, "InputError", "summarizer", "bad: it is")
    timeout = Fault.from_text("harness: the tests timed out after 5 s")
    assert (timeout.name, timeout.message) == ("", "the tests timed out after 5 s")


def test_a_continuation_fault_kept_without_its_kind_is_the_harness() -> None:
    fault = Fault.from_text("EnvironmentFault: exec failed (exit 1)")
    assert (fault.kind, fault.name, fault.message) == (
        FaultKind.HARNESS, "EnvironmentFault", "exec failed (exit 1)")


def test_vocabulary_members_are_their_stored_words() -> None:
    assert Arm.PRE == "pre" and f"{Arm.POST}" == "post"
    assert json.dumps({"label": Label.DAMAGED}) == '{"label": "damaged"}'
    assert Label("preserved") is Label.PRESERVED
    with pytest.raises(ValueError):
        Label("damgaed")
