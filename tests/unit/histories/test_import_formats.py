"""Reading trajectory files: format detection, conversion to tool calls, recorded outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from replay.core.errors import InputError
from replay.histories.importers import detect_format, read_trajectory
from replay.histories.importers.divergences import compare
from replay.histories.importers.recorded import Expected, split_observation

from paths import FIXTURES

FIXTURES = FIXTURES / "trajectories"
MINI = FIXTURES / "replay-demo__tally-1.traj.json"
SWE = FIXTURES / "replay-demo__tally-1.traj"
OPENAI = FIXTURES / "replay-demo__tally-1.openai.json"


def test_formats_are_recognized_from_the_content() -> None:
    assert detect_format(json.loads(MINI.read_text())) == "mini-swe-agent"
    assert detect_format(json.loads(SWE.read_text())) == "swe-agent"
    assert detect_format(json.loads(OPENAI.read_text())) == "openai"
    assert detect_format(json.loads(OPENAI.read_text())["messages"]) == "openai"
    assert detect_format({"steps": []}) is None and detect_format([1, 2]) is None


def test_mini_swe_agent_bash_blocks_become_bash_tool_calls() -> None:
    recorded = read_trajectory(MINI)
    assert (recorded.format, recorded.instance_id) == ("mini-swe-agent", "replay-demo__tally-1")
    assert recorded.model == "anthropic/claude-sonnet-4-5-20250929"
    assert recorded.opening == 2 and len(recorded.steps) == 5
    first = recorded.messages[2]
    assert first["content"] == "THOUGHT: Let me find where the currency table is used in money.py."
    call = first["tool_calls"][0]
    assert call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == {
        "command": "grep -n 'CURRENCIES' tally/money.py"}
    observation = recorded.messages[3]
    assert observation["role"] == "tool" and observation["tool_call_id"] == call["id"]
    assert observation["content"].startswith("<returncode>0</returncode>\n<output>\n8:from")
    action = recorded.steps[0].actions[0]
    assert action.expected.exit_code == 0 and action.expected.text.startswith("8:from tally")
    submit = recorded.steps[-1].actions[0].expected
    assert submit.text.startswith("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\ndiff --git")
    assert [step.end for step in recorded.steps] == [4, 6, 8, 10, 12]


def test_swe_agent_steps_become_bash_calls_and_submit_finishes() -> None:
    recorded = read_trajectory(SWE)
    assert (recorded.format, recorded.instance_id, recorded.model) == (
        "swe-agent", "replay-demo__tally-1", "gpt-4o")
    assert [m["role"] for m in recorded.messages[:2]] == ["system", "user"]
    names = [step.actions[0].tool for step in recorded.steps]
    assert names == ["bash", "bash", "bash", "bash", "finish"]
    assert recorded.messages[-2]["tool_calls"][0]["function"]["name"] == "finish"
    edit = recorded.steps[2].actions[0].expected
    assert edit == Expected(" tally/money.py | 4 ++--\n 1 file changed, 2 insertions(+), "
                            "2 deletions(-)\n")


def test_openai_messages_keep_their_tool_calls_and_need_every_result(tmp_path: Path) -> None:
    recorded = read_trajectory(OPENAI)
    data = json.loads(OPENAI.read_text())
    assert recorded.messages == data["messages"] and recorded.opening == 2
    assert [a.tool for s in recorded.steps for a in s.actions] == [
        "read_file", "bash", "edit_file", "edit_file", "bash", "finish"]
    assert recorded.steps[1].actions[0].raw and not recorded.steps[0].actions[0].raw
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(data["messages"]))
    assert read_trajectory(bare).instance_id is None
    bare.write_text(json.dumps(data["messages"][:-1]))
    with pytest.raises(InputError, match=r"tool call call_6 \(message 13\) has no tool message"):
        read_trajectory(bare)


@pytest.mark.parametrize(("text", "message"), [
    ('{"messages": [', "not valid JSON (line 1"),
    ('{"episodes": []}', "unknown trajectory format"),
    ('{"trajectory": [{"action": "ls"}]}', "no system or task message before the first step"),
    ('{"trajectory_format": "mini-swe-agent-1", "messages": [{"role": "system"}]}',
     "the trajectory has no steps"),
    ('{"trajectory": "later"}', "unknown trajectory format"),
    ('[{"role": "assistant", "tool_calls": [{"id": "a"}]}]', "not a valid openai trajectory"),
])
def test_a_bad_file_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        read_trajectory(path)
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


def test_a_format_can_be_forced_and_must_exist() -> None:
    assert read_trajectory(OPENAI, "openai").format == "openai"
    with pytest.raises(InputError, match="unknown trajectory format 'claude'"):
        read_trajectory(OPENAI, "claude")


@pytest.mark.parametrize(("text", "expected"), [
    ("exit code: 1\nboom\n", Expected("boom\n", 1)),
    ("exit code: 124\n[timed out after 5 s]\npartial", Expected("partial", 124)),
    ("<returncode>2</returncode>\n<output>\nno such file\n</output>", Expected("no such file", 2)),
    ("<returncode>0</returncode>\n<warning>long</warning><output_head>\nab\n</output_head>"
     "<elided_chars>9</elided_chars><output_tail>\nyz\n</output_tail>", Expected("ab", 0, "yz")),
    ("hello\n[exit code 3]", Expected("hello", 3)),
    ("just text", Expected("just text")),
])
def test_recorded_observations_are_split_into_output_and_exit_code(
        text: str, expected: Expected) -> None:
    assert split_observation(text) == expected


def test_outputs_compare_without_trailing_space_or_durations() -> None:
    recorded = Expected("3 passed in 0.02s  \n\n", 0)
    assert compare(recorded, "3 passed in 1.37s\n", 0) is None
    assert compare(recorded, "3 passed in 0.02s", 1).describe() == "exit code 1, recorded 0"
    assert compare(recorded, "2 passed, 1 failed in 0.02s", 0).describe() == (
        "output differs at line 1, column 1: recorded '3 passed in <duration>', "
        "got '2 passed, 1 failed in <duration>'")
    assert compare(Expected("a\nb"), "a", None).describe().startswith("output is shorter")
    assert compare(Expected("ab", 0, "yz"), "ab\n...\nyz", 0) is None
    assert compare(Expected(None), "anything", 1) is None


# The head of `ls -la` in /testbed as psf__requests-5414's recorded trajectory (the SWE-bench
# image, ext4) printed it, and as replay's environment (an overlay on tmpfs) lists the same tree.
RECORDED_LS = """total 156
drwxrwxrwx 1 root root  4096 Oct 24  2024 .
drwxr-xr-x 1 root root  4096 Nov 18 23:45 ..
-rw-r--r-- 1 root root    32 Oct 24  2024 .coveragerc
drwxrwxrwx 8 root root  4096 Oct 24  2024 .git
-rw-r--r-- 1 root root 52203 Oct 24  2024 HISTORY.md"""
EXECUTED_LS = """total 144
drwxr-xr-x 1 root root   40 Dec  2 06:20 .
drwxr-xr-x 1 root root 4096 Dec  2 06:20 ..
-rw-r--r-- 1 root root   32 Dec  2 06:20 .coveragerc
drwxr-xr-x 8 root root  220 Dec  2 06:20 .git
-rw-r--r-- 1 root root 52203 Dec  2 06:20 HISTORY.md"""


def test_an_ls_listing_differs_benignly_in_what_the_file_system_decides() -> None:
    """Dates, column widths, the blocks total and folders' modes and sizes are the file
    system's; a file's size or mode, or a missing entry, is the tree's."""
    found = compare(Expected(RECORDED_LS), EXECUTED_LS, None, "ls -la")
    assert found is not None and set(found.benign) == {"ls dates", "ls folder entries",
                                                       "ls totals"}
    bigger = EXECUTED_LS.replace("   32 Dec", "   33 Dec")
    assert compare(Expected(RECORDED_LS), bigger, None, "ls -la").benign == ()
    executable = EXECUTED_LS.replace("-rw-r--r-- 1 root root   32", "-rwxr-xr-x 1 root root   32")
    assert compare(Expected(RECORDED_LS), executable, None, "ls -la").benign == ()
    fewer = "\n".join(line for line in EXECUTED_LS.splitlines() if not line.endswith(".git"))
    assert compare(Expected(RECORDED_LS), fewer, None, "ls -la").benign == ()
