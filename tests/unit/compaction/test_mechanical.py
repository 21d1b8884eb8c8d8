"""Mechanical summarizers on a realistic Phase A history built here."""

from __future__ import annotations

import copy
import json
import re

import pytest

from replay.compaction.mechanical import TOKEN_PIECE, anchor_index, observation_masking, tail
from replay.compaction.transcript import serialize_history

TRACEBACK = """\
Traceback (most recent call last):
  File "/testbed/src/_pytest/skipping.py", line 247, in evaluate_skip_marks
    result = eval(condition_code, globals_)
  File "<string>", line 1, in <module>
NameError: name 'sys_platform' is not defined
"""
# A long pytest run: progress dots around the traceback, and the failure summary at the end.
PYTEST_OUTPUT = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.9.20, pytest-6.0.0rc2.dev51+g7f7a36478, py-1.11.0\n"
    + "".join(f"testing/test_capture.py {'.' * 60} [{i:3d}%]\n" for i in range(0, 60, 2))
    + TRACEBACK
    + "".join(f"testing/test_skipping.py {'.' * 60} [{i:3d}%]\n" for i in range(60, 100, 2))
    + "FAILED testing/test_capture.py::TestCaptureFixture::test_cafd_preserves_newlines[\\r\\n]"
    " - AssertionError: assert 'a\\n' == 'a\\r\\n'\n"
    "E       assert 'a\\n' == 'a\\r\\n'\n"
    "1 failed, 112 passed in 3.21s\n"
)
FILE_VIEW = "".join(
    f"{n:6d}\t{line}\n"
    for n, line in enumerate(
        [
            "class FDCapture(FDCaptureBinary):",
            "    def snap(self):",
            "        self.tmpfile.seek(0)",
            "        res = self.tmpfile.read()",
            "        return res",
        ],
        start=380,
    )
)


def _call(call_id: str, name: str, **arguments: object) -> dict:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


def history() -> list[dict]:
    """System, task, three tool rounds (test run, file view, edit), a final test run."""
    return [
        {"role": "system", "content": "You are a coding agent. The repository is at /testbed."},
        {
            "role": "user",
            "content": "capfd.readouterr() converts \\r to \\n since pytest 6.0.0rc1. "
            "Issue #7521: https://github.com/pytest-dev/pytest/issues/7521",
        },
        {
            "role": "assistant",
            "content": "Let me run the capture tests first.",
            "tool_calls": [
                _call("call_1", "bash", command="cd /testbed && python -m pytest testing -x -q")
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": PYTEST_OUTPUT},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                _call(
                    "call_2",
                    "str_replace_editor",
                    command="view",
                    path="/testbed/src/_pytest/capture.py",
                    view_range=[380, 384],
                )
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": FILE_VIEW},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "FDCapture.snap decodes with newline=None."}],
            "tool_calls": [
                _call(
                    "call_3",
                    "str_replace_editor",
                    command="str_replace",
                    path="/testbed/src/_pytest/capture.py",
                    old_str="TextIO(tmpfile, encoding='utf-8')",
                    new_str="EncodedFile(tmpfile, encoding='utf-8', newline='')",
                ),
                _call("call_4", "bash", command=["bash", "-lc", "git diff --stat"]),
            ],
        },
        {"role": "tool", "tool_call_id": "call_3", "content": "The file has been edited."},
        {"role": "tool", "tool_call_id": "call_4", "content": " src/_pytest/capture.py | 2 +-"},
    ]


def _section(index: str, title: str) -> list[str]:
    """The entry lines of one section of an anchor index."""
    block = index.split(f"## {title} (", 1)[1].split("\n\n", 1)[0]
    return block.splitlines()[1:]


def _line(entries: list[str], value: str) -> str:
    return next(line for line in entries if line.startswith(f"- {value}"))


# --- serialize_history ----------------------------------------------------------------------


def test_serialize_history_is_a_readable_transcript() -> None:
    text = serialize_history(history())
    assert text.startswith("[0] system\nYou are a coding agent.")
    assert '-> call bash (call_1): {"command": "cd /testbed && python' in text
    assert "[3] tool bash (call_1)\n====" in text
    assert "[6] assistant\nFDCapture.snap decodes with newline=None.\n-> call str_replace" in text
    assert "[8] tool bash (call_4)\n src/_pytest/capture.py | 2 +-" in text
    assert serialize_history([]) == ""


# --- anchor_index ---------------------------------------------------------------------------


def test_anchor_index_keeps_a_deep_traceback_with_its_location() -> None:
    index = anchor_index(history())
    errors = _section(index, "Error messages")
    assert _line(errors, "NameError: name 'sys_platform' is not defined").endswith("[#3 tool:bash]")
    assert any("AssertionError: assert 'a\\n' == 'a\\r\\n'" in line for line in errors)
    assert "- NameError [#3 tool:bash]" in _section(index, "Error types")
    frame_path = _line(_section(index, "Files and paths"), "/testbed/src/_pytest/skipping.py")
    assert frame_path.endswith("[#3 tool:bash]")
    assert "- evaluate_skip_marks [#3 tool:bash]" in _section(index, "Identifiers")


def test_anchor_index_lists_paths_once_with_every_place() -> None:
    paths = _section(anchor_index(history()), "Files and paths")
    capture = _line(paths, "/testbed/src/_pytest/capture.py")
    assert capture.endswith("[#4 assistant→str_replace_editor, #6 assistant→str_replace_editor]")
    assert sum(line.startswith("- /testbed/src/_pytest/capture.py ") for line in paths) == 1
    assert _line(paths, "src/_pytest/capture.py").endswith("[#8 tool:bash]")


def test_anchor_index_numbers_carry_context_and_skip_listing_gutters() -> None:
    numbers = _section(anchor_index(history()), "Numbers (with context)")
    assert _line(numbers, "112 ").startswith("- 112 — 1 failed, 112 passed in 3.21s")
    assert _line(numbers, "3.21s ").endswith("[#3 tool:bash]")
    assert _line(numbers, "247 ").startswith('- 247 — File "/testbed/src/_pytest/skipping.py"')
    assert _line(numbers, "7521 ").endswith("[#1 user]")
    assert _line(numbers, "6.0.0rc2.dev51+g7f7a36478 ").endswith("[#3 tool:bash]")
    assert _line(numbers, "380 ").endswith("[#4 assistant→str_replace_editor]")
    assert not any(line.startswith("- 381 ") for line in numbers)  # only a gutter


def test_anchor_index_urls_tests_commands_and_identifiers() -> None:
    index = anchor_index(history())
    assert _section(index, "URLs") == [
        "- https://github.com/pytest-dev/pytest/issues/7521 [#1 user]"
    ]
    test_id = "testing/test_capture.py::TestCaptureFixture::test_cafd_preserves_newlines[\\r\\n]"
    assert _section(index, "Test ids") == [f"- {test_id} [#3 tool:bash]"]
    commands = _section(index, "Commands run")
    assert commands == [
        "- `cd /testbed && python -m pytest testing -x -q` [#2 assistant→bash]",
        "- `git diff --stat` [#6 assistant→bash]",
    ]
    identifiers = [line.split(" [")[0][2:] for line in _section(index, "Identifiers")]
    for name in ("capfd.readouterr", "FDCapture", "FDCaptureBinary", "self.tmpfile.seek",
                 "EncodedFile", "TextIO"):  # fmt: skip
        assert name in identifiers
    assert "NameError" not in identifiers and "print" not in identifiers


def test_anchor_index_is_deterministic_and_ordered_by_kind() -> None:
    messages = history()
    before = copy.deepcopy(messages)
    index = anchor_index(messages)
    assert anchor_index(history()) == index
    assert messages == before
    titles = re.findall(r"^## (.+?) \(\d+\)$", index, flags=re.M)
    assert titles == [
        "Files and paths",
        "Test ids",
        "Error messages",
        "Error types",
        "Commands run",
        "URLs",
        "Identifiers",
        "Numbers (with context)",
    ]


def test_anchor_index_of_an_empty_history() -> None:
    assert anchor_index([]).endswith("(no literal details found)\n")


# --- observation_masking --------------------------------------------------------------------


def test_observation_masking_keeps_the_last_outputs_and_the_pairing() -> None:
    messages = history()
    before = copy.deepcopy(messages)
    kept = observation_masking(messages, keep_last=2)
    assert messages == before
    assert len(kept) == len(messages)
    assert kept[3]["content"] == f"[output of bash omitted ({len(PYTEST_OUTPUT)} chars)]"
    assert kept[5]["content"].startswith("[output of str_replace_editor omitted")
    assert kept[7] == messages[7] and kept[8] == messages[8]
    assert [m for i, m in enumerate(kept) if i not in (3, 5)] == [
        m for i, m in enumerate(messages) if i not in (3, 5)
    ]
    calls = [c["id"] for m in kept if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answers = [m["tool_call_id"] for m in kept if m["role"] == "tool"]
    assert calls == answers == ["call_1", "call_2", "call_3", "call_4"]


def test_observation_masking_bounds() -> None:
    messages = history()
    assert observation_masking(messages, keep_last=10) == messages
    masked_all = observation_masking(messages, keep_last=0)
    assert all(m["content"].startswith("[output of") for m in masked_all if m["role"] == "tool")
    with pytest.raises(ValueError):
        observation_masking(messages, keep_last=-1)


# --- tail -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tokens", [1, 7, 50, 400])
def test_tail_is_a_suffix_within_the_token_bound(tokens: int) -> None:
    full = serialize_history(history())
    cut = tail(history(), tokens=tokens)
    assert full.endswith(cut)
    assert len(TOKEN_PIECE.findall(cut)) == tokens


def test_tail_edges() -> None:
    full = serialize_history(history())
    assert tail(history(), tokens=10**6) == full
    assert tail(history(), tokens=0) == ""
    assert tail(history(), tokens=3) == "2 +-\n"
    with pytest.raises(ValueError):
        tail(history(), tokens=-1)
