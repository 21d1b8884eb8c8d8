"""Retention of a run on the demo suite, as a user runs it: a prompt sweep with the
`anchor_index` baseline and a summarizer that writes short LLM-style summaries, then its
retention and its report, through `replay.api`.

The continuation agent is scripted. PRE resumes each history the way an agent does: it runs
the history's last check again, reads the file, writes the fix, runs the tests and finishes, so
the payloads after the boundary are real tool outputs of the demo repositories. Every POST
writes the fix at once.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from replay import api
from replay.histories.boundaries import parse_rule
from replay.histories.records import bundled_history
from replay.histories.trajectories import cut_history
from replay.measures.retention import Limits, recurring_reference
from replay.measures.runs import reference_of
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.records.trajectory import Step, Trajectory
from replay.store import Store
from replay.store.histories import keep
from replay.store.scores import kept_scores

from agent_scripts import call, fixing_turns
from demo_sweep import environment, printed_report, sweep_options
from sweep_scripts import DEMO, RESUMED, fix_turn, fixture_prompts, models_file

SHORT = ("<analysis>Looking back over the conversation.</analysis>\n<summary>\n"
         "The user asked to fix a bug in the repository at /testbed where a lookup rejects "
         "input that the README says is valid. I explored the layout, read the main module and "
         "reproduced the failure. The cause is that a name is used as given instead of going "
         "through the existing helper that normalizes it. Next step: make that change and run "
         "the test suite with python -m pytest -q.\n</summary>")
ISSUE_MARKERS = {"replay-demo__stockroom-1": "reject unit aliases",
                 "replay-demo__tally-1": "Superseded currency codes are rejected",
                 "replay-demo__iniconf-1": "README example fails"}


def last_check(instance_id: str) -> str:
    """The last shell command of the instance's Phase A history."""
    history = bundled_history(DEMO[instance_id])
    assert history is not None
    commands = [json.loads(c["function"]["arguments"])["command"]
                for m in history.messages for c in m.get("tool_calls") or []
                if c["function"]["name"] == "bash"]
    return commands[-1]


def scripts(scratch: Path) -> list[Script]:
    """POSTs fix at once; each PRE checks again, reads, fixes, tests and finishes."""
    everything = list(DEMO.values())
    pre = [Script([{"content": "Let me run the last check again.",
                    "tool_calls": [call("bash", command=last_check(instance_id))]},
                   *fixing_turns(DEMO[instance_id], scratch)],
                  model="agent", contains=marker)
           for instance_id, marker in ISSUE_MARKERS.items()]
    return [Script([fix_turn(everything, scratch)], model="agent", contains=RESUMED), *pre,
            Script([{"content": SHORT}], model="summ-a")]


def test_anchor_index_keeps_far_more_recurring_details_than_a_short_summary(
        tmp_path: Path) -> None:
    store = tmp_path / "runs" / "replay.db"
    catalogue = fixture_prompts(tmp_path)
    with ScriptedServer(*scripts(tmp_path)) as server, \
            environment(models_file(tmp_path, server.base_url)):
        plan = api.plan("prompt", [*api.summarizers(["summ-a"], "claude-code"),
                                   *api.summarizers([], "", ["anchor_index"])],
                        "agent", prompt_sources=catalogue)
        swept = api.sweep(plan, sweep_options(store), "demo")
        assert swept.code == 0 and swept.result.ran == 3 + 6, swept.result
    scored = api.retention(store, "demo")
    assert len(scored.rows) == 6 and not scored.skipped
    with Store.open(store) as opened:
        rows = kept_scores(opened, "demo")
    assert len(rows) == 6
    shares = {(row.instance_id, row.summarizer): row for row in rows}
    assert {row.source for row in rows} == {"pre"}
    for instance_id in ISSUE_MARKERS:
        anchor = shares[(instance_id, "anchor_index")]
        short = shares[(instance_id, "summ-a:claude-code")]
        assert anchor.size == short.size >= 15  # one reference, shared by both
        assert anchor.share is not None and short.share is not None
        assert anchor.share >= 0.7 and short.share <= 0.2, (instance_id, anchor, short)

    assert "detail retention" in printed_report(store, "demo")
    api.export(store, "demo")
    exported = json.loads((store.parent / "reports" / "demo" / "report.json").read_text())
    rates = {rate["summarizer"]: rate for rate in exported["rates"]}
    anchor_mean, anchor_n, _, anchor_size, source = rates["anchor_index"]["retention"]
    short_mean, short_n, _, short_size, _ = rates["summ-a:claude-code"]["retention"]
    assert source == "pre" and anchor_size == short_size >= 15  # the report names both
    assert anchor_n == short_n == 3 and anchor_mean - short_mean >= 0.5
    markdown = (store.parent / "reports" / "demo" / "report.md").read_text()
    assert f"| anchor_index | 0/{rates['anchor_index']['pre_pass']}" in markdown
    for value, size in ((anchor_mean, anchor_size), (short_mean, short_size)):
        # the mean, its bootstrap interval, n, and the references' size and source
        assert re.search(rf"{100 * value:.1f}% \(\d+\.\d-\d+\.\d%, n=3, size {size:.0f}, "
                         r"source pre\)", markdown)


def test_an_imported_history_is_scored_against_its_own_later_steps(tmp_path: Path) -> None:
    """A history cut from a stored trajectory: the payloads after its boundary are the
    trajectory's later steps, not a PRE continuation (the run has none here)."""
    messages = [
        {"role": "user", "content": "Fix parse_header in src/http/headers.py"},
        {"role": "assistant", "content": "Reading.", "tool_calls": [
            call_with_id("c1", "bash", command="cat -n src/http/headers.py")]},
        {"role": "tool", "tool_call_id": "c1",
         "content": "def parse_header(line):\n    raise HeaderError('bad line')"},
        {"role": "assistant", "content": "Running the failing test.", "tool_calls": [
            call_with_id("c2", "bash", command="pytest tests/test_headers.py -q")]},
        {"role": "tool", "tool_call_id": "c2",
         "content": "E   HeaderError: bad line\nsrc/http/headers.py:2: HeaderError\n1 failed"},
    ]
    steps = [Step(end=3, context_tokens=100, tokens_estimated=True, fingerprint="f1", diff=b""),
             Step(end=5, context_tokens=200, tokens_estimated=True, fingerprint="f2", diff=b"")]
    trajectory = Trajectory("k" * 64, "demo-1", "0" * 40, "m", "test", messages, 50, steps,
                            "finished", True)
    with Store.open(tmp_path / "replay.db") as store:
        keep(store, [], [trajectory])
        history = cut_history(trajectory, parse_rule("steps:1"))
        reference = reference_of(store, history, {}, Limits())
        assert reference.source == "trajectory"
        assert reference.history is not None and reference.later is not None
        chosen = recurring_reference(reference.history, reference.later, Limits())
        assert chosen["path"] == ["src/http/headers.py"]
        assert chosen["error_type"] == ["HeaderError"]
        assert "parse_header" not in chosen["identifier"]  # said before, never after
        missing = reference_of(store, history.model_copy(update={"trajectory": ""}), {}, Limits())
        assert (missing.source, missing.reason) == ("missing", "no PRE continuation in the run "
                                                               "yet")


def call_with_id(call_id: str, name: str, **arguments: object) -> dict:
    """An OpenAI-format tool call with an id and JSON arguments."""
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}
