"""The web view's pages, server and command, on a store written straight from records: a PRE that
edits one file beside a POST that edits another and whose trace holds markup."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from replay.agent.loop import AgentConfig
from replay.agent.tools import TOOLS
from replay.core.vocab import ValidationStatus
from replay.models.cache import CallCache, call_request
from replay.models.client import call_key, settled
from replay.models.types import ChatRequest, ModelSpec
from replay.records.cell import CellId, CellResult
from replay.records.continuation import KeptContinuation
from replay.records.grade import Grade
from replay.records.plan import Plan
from replay.records.reply import ChatResponse, Usage
from replay.records.retention import KeptScore, ScoreDetail
from replay.records.summary import KeptSummary, Summary
from replay.records.trace import Trace
from replay.records.validation import Validation
from replay.report.web.data import grid_view, read_store
from replay.report.web.highlight import marked
from replay.report.web.pages import page_name, render_cell, render_grid, write_site
from replay.report.web.server import ViewServer
from replay.report.web.traces import first_divergence, steps_of
from replay.store import Store, continuations, scores, summaries, validations
from replay.store.runs import keep_cell, save_run
from replay.store.schema import TABLES

from conftest import run_replay

AGENT = ModelSpec(alias="agent", provider="openai", model="agent",
                  base_url="http://127.0.0.1:1/v1")
PLAN = Plan(kind="backbone", agent="agent", agent_id="openai:agent@http://127.0.0.1:1/v1",
            instances=("one",), summarizers=("m:codex",), confirm=(("one", "m:codex"),))
HISTORY = [
    {"role": "system", "content": "You fix issues."},
    {"role": "user", "content": "Fix the ValueError in /testbed/pkg/mod.py"},
    {"role": "assistant", "content": "Looking.", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "bash", "arguments": json.dumps({"command": "cat pkg/mod.py"})}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "raise ValueError('x')"},
]
SCRIPT = "<script>document.title='pwned'</script>"
TEST = "tests/test_mod.py::test_fix"


def call(name: str, **arguments: object) -> dict:
    return {"id": f"c-{name}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def action(step: int, tool: str, output: str, **arguments: object) -> dict:
    return {"step": step, "tool": tool, "arguments": arguments, "output": output,
            "exit_code": 0, "seconds": 0.1, "error": False}


def trace(start: list[dict], steps: list[tuple[str, list[dict]]]) -> dict:
    """A saved trace: each step is (text, actions)."""
    messages = list(start)
    actions = []
    for number, (text, acts) in enumerate(steps, start=1):
        messages.append({"role": "assistant", "content": text,
                         "tool_calls": [call(a["tool"], **a["arguments"]) for a in acts]})
        for a in acts:
            a["step"] = number
            messages.append({"role": "tool", "tool_call_id": f"c-{a['tool']}",
                             "content": a["output"]})
            actions.append(a)
    return {"messages": messages, "start_index": len(start), "actions": actions,
            "steps": len(steps), "exit_reason": "finished", "error": None, "input_tokens": 10,
            "output_tokens": 5, "cached_tokens": 0, "cost": 0.0, "seconds": 1.0,
            "files_edited": [], "files_read": []}


PRE = trace(HISTORY, [
    ("Fixing the raise.", [action(0, "edit_file", "edited /testbed/pkg/mod.py",
                                  path="pkg/mod.py", old="raise ValueError('x')",
                                  new="return None")]),
    ("Done.", [action(0, "finish", "finished", summary="done")]),
])
POST = trace([HISTORY[0], {"role": "user", "content": "Summary: fix pkg/mod.py"}], [
    (f"Writing {SCRIPT}", [action(0, "write_file", "wrote /testbed/pkg/other.py",
                                  path="pkg/other.py", content=f"print('{SCRIPT}')\n")]),
    ("Done.", [action(0, "finish", "finished", summary="done")]),
])


def grade(resolved: bool) -> dict:
    status = "PASSED" if resolved else "FAILED"
    return {"resolved": resolved, "status": "RESOLVED_FULL" if resolved else "RESOLVED_NO",
            "tests_ran": True, "statuses": {TEST: status},
            "fail_to_pass": {"success": [TEST] if resolved else [],
                             "failure": [] if resolved else [TEST]},
            "pass_to_pass": {"success": [], "failure": []}, "log_path": None, "duration": 1.0,
            "timed_out": False}


def keep_continuation(store: Store, key: str, data: dict, resolved: bool,
                      calls: tuple[str, ...] = ()) -> None:
    writer = continuations.writer(store, key)
    writer.trace(Trace.from_dict(data))
    writer.tests_log(f"{TEST} {'PASSED' if resolved else 'FAILED'} {SCRIPT}\n")
    continuations.keep(store, KeptContinuation(key, "one", "pre" if resolved else "post",
                                               resolved, Grade(**grade(resolved)), calls))


def step_key() -> str:
    """The key PRE step 1's call is kept under."""
    config = AgentConfig()
    request = ChatRequest(messages=PRE["messages"][:len(HISTORY)], tools=TOOLS,
                          temperature=config.temperature, max_tokens=config.max_tokens)
    return call_key(AGENT, request, 0)


@pytest.fixture
def view_store(tmp_path: Path) -> Path:
    """Run `r`: instance `one`, summarizer `m:codex`, damaged. PRE's steps and the summary's
    two calls are recorded with them, and only PRE step 1's call is in the call cache; POST's
    continuation was kept before calls were recorded with it."""
    path = tmp_path / "runs" / "replay.db"
    with Store.open(path) as store:
        save_run(store, "r", PLAN)
        validations.keep(store, "local", Validation("one", ValidationStatus.VALID, []))
        keep_continuation(store, "a" * 64, PRE, True, (step_key(), "f" * 64))
        keep_continuation(store, "b" * 64, POST, False)
        summaries.keep(store, "s1", KeptSummary("one", 0, "m:codex", Summary(
            "m:codex", f"Fix /testbed/pkg/mod.py <b>{SCRIPT}", input_tokens=7, output_tokens=3,
            calls=("d" * 64, "e" * 64)), requests=2))
        keep_cell(store, "r", CellResult(CellId("one", "pre", "", 0), "done", True, "a" * 64,
                                           diagnostics={"steps": 2}))
        keep_cell(store, "r", CellResult(CellId("one", "post", "m:codex", 0), "done", False,
                                           "b" * 64, "s1", diagnostics={"steps": 2}))
        scores.replace(store, "r", [ScoreDetail(
            KeptScore("one", "m:codex", 0, 0.5, 1, 2, "pre"),
            kept={"path": ["/testbed/pkg/mod.py"]}, missed={"error_type": ["ValueError"]})])
    config = AgentConfig()
    request = ChatRequest(messages=PRE["messages"][:len(HISTORY)], tools=TOOLS,
                          temperature=config.temperature, max_tokens=config.max_tokens)
    asked = call_request(AGENT, settled(AGENT, request, 0), 0)
    with CallCache(path) as cache:
        cache.put(step_key(), asked, ChatResponse(
            message=PRE["messages"][len(HISTORY)], cost=0.0123,
            usage=Usage(input_tokens=1234, output_tokens=56, cached_tokens=789)))
    return path


def cell_html(path: Path) -> str:
    with read_store(path, None) as (store, run):
        return render_cell(store, grid_view(store, run).report, "one", "m:codex", 0)


def test_steps_and_the_first_divergence() -> None:
    pre, post = steps_of(PRE), steps_of(POST)
    assert [len(step.actions) for step in pre] == [1, 1]
    assert pre[0].text == "Fixing the raise." and pre[0].actions[0].target == "pkg/mod.py"
    assert ("del", "-raise ValueError('x')") in pre[0].actions[0].diff
    found = first_divergence(pre, post)
    assert (found.step, found.kind) == (1, "different action")  # edit_file against write_file
    same_file = trace([], [("", [action(0, "edit_file", "", path="a.py", old="x", new="y")])])
    other_file = trace([], [("", [action(0, "edit_file", "", path="b.py", old="x", new="y")])])
    other_edit = trace([], [("", [action(0, "edit_file", "", path="a.py", old="x", new="z")])])
    longer = trace([], [("", [action(0, "edit_file", "", path="a.py", old="x", new="y")]),
                        ("", [action(0, "bash", "", command="pytest")])])
    assert first_divergence(steps_of(same_file), steps_of(same_file)) is None
    assert first_divergence(steps_of(same_file), steps_of(other_file)).kind == "different file"
    assert first_divergence(steps_of(same_file), steps_of(other_edit)).kind == "different edit"
    stopped = first_divergence(steps_of(same_file), steps_of(longer))
    assert (stopped.step, stopped.kind) == (2, "different action")
    assert "PRE had stopped" in stopped.detail


def test_marked_text_is_escaped_and_marks_kept_and_lost_details() -> None:
    html = str(marked(f"{SCRIPT} in /testbed/a.py: KeyError", ["/testbed/a.py"], ["KeyError"]))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<mark class="kept">/testbed/a.py</mark>' in html
    assert '<mark class="lost">KeyError</mark>' in html
    assert str(marked("<i>", [], [])) == "&lt;i&gt;"


def test_a_cell_page_shows_summary_traces_tests_and_calls(view_store: Path) -> None:
    html = cell_html(view_store)
    assert "<script" not in html and "&lt;script&gt;document.title" in html
    assert "&lt;b&gt;" in html  # the summary's own markup is text too
    assert re.search(r'id="divergence">First divergence at step 1: <b>different action</b>',
                     html)
    assert 'class="step diverges" id="step-1"' in html
    assert '<mark class="kept">/testbed/pkg/mod.py</mark>' in html
    assert '<mark class="lost">ValueError</mark>' in html
    assert '<span class="d-del">-raise ValueError(&#39;x&#39;)</span>' in html
    assert re.search(rf"<code>{re.escape(TEST)}</code></td><td class=\"s-PASSED\">PASSED</td>"
                     r"<td class=\"s-FAILED\">FAILED</td>", html)
    calls = html[html.index('id="calls"'):]
    assert re.search(r"<td>PRE</td><td>step 1</td>\s*<td>agent</td><td>1234</td><td>789</td>"
                     r"<td>56</td><td>\$0.0123</td>", calls)
    assert "not recorded" in calls  # latency: this row was stored before calls were timed
    # PRE step 2 and the summary's two calls were never cached: shown, not left out
    assert len(re.findall(r"<td>(?:PRE</td><td>step 2|POST</td><td>summary [12]/2)</td>\s*"
                          r"<td colspan=\"8\" class=\"note\">not in the store&#39;s model calls",
                          calls)) == 3
    # POST's steps were kept before their calls were recorded with them: shown as such
    assert len(re.findall(r"<td>POST</td><td>step [12]</td>\s*<td colspan=\"8\" "
                          r"class=\"note\">kept before its calls were recorded with it",
                          calls)) == 2
    table = calls[:calls.index("</table>")]
    width = table[:table.index("</thead>")].count("<th>")
    total = table[table.index("<tfoot>"):]
    assert width == 10 and sum(int(n) for n in re.findall(r'colspan="(\d+)"', total)) + (
        total.count("<td>") + total.count("<th>")) == width  # the total row spans the table
    seeds = html[html.index('class="seeds"'):]
    assert f'<a href="{page_name("one", "m:codex", 1).split("/")[1]}">1</a>' in seeds


def test_the_grid_links_each_pair_and_shows_damage_and_retention(view_store: Path) -> None:
    with read_store(view_store, "r") as (store, run):
        html = render_grid(grid_view(store, run))
    cell = re.search(r'<td class="label label-damaged confirm-pending"[^>]*>\s*'
                     r'<a href="([^"]+)">D\?</a>', html)  # confirming: seeds 1, 2 not run
    assert cell and cell.group(1) == page_name("one", "m:codex", 0)
    assert "1/1 (100.0%, 20.7-100.0%)" in html and "50.0% (n=1, size 2, source pre)" in html


def test_the_site_is_written_and_the_store_is_untouched(view_store: Path,
                                                        tmp_path: Path) -> None:
    before = hashlib.sha256(view_store.read_bytes()).hexdigest()
    with read_store(view_store, None) as (store, run):
        written = write_site(store, run, tmp_path / "site")
    assert hashlib.sha256(view_store.read_bytes()).hexdigest() == before
    wal = view_store.with_name("replay.db-wal")  # SQLite's reader files: the log stays empty
    assert not wal.exists() or wal.stat().st_size == 0
    names = {path.relative_to(tmp_path / "site").as_posix() for path in written}
    assert names == {"index.html", "static/view.css",
                     *(page_name("one", "m:codex", seed) for seed in (0, 1, 2))}
    for page in written:
        if page.suffix == ".html":
            for link in re.findall(r'href="([^"]+)"', page.read_text()):
                assert (page.parent / link).is_file(), (page, link)
    seed = (tmp_path / "site" / page_name("one", "m:codex", 2)).read_text()
    assert "POST seed 2 <b class=\"v-not-run\">not run</b>" in seed


def test_an_older_store_with_no_run_table_is_read_without_changing_it(tmp_path: Path) -> None:
    path = tmp_path / "replay.db"
    with sqlite3.connect(path) as old:  # what `replay validate` of a replay at 529a986 left
        old.execute(TABLES["meta"])
        old.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        old.execute(TABLES["validations"])
    old.close()
    before = path.read_bytes()
    done = run_replay("view", "--store", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: the store {path} has no run yet: run `replay backbone` or `replay prompt` "
        "first"]
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["replay.db"]


@pytest.mark.parametrize("args, message", [
    (["nope"], "error: no run 'nope' in {store}; runs: r"),
    (["--store", "{missing}"], "error: no store at {missing}"),
])
def test_an_unknown_run_or_store_is_one_line_and_exit_2(args: list[str], message: str,
                                                        view_store: Path,
                                                        tmp_path: Path) -> None:
    names = {"store": view_store, "missing": tmp_path / "none.db"}
    done = run_replay("view", "--store", str(view_store),
                      *[arg.format(**names) for arg in args])
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith(message.format(**names))


def test_the_server_answers_pages_with_no_script_allowed(view_store: Path) -> None:
    with ViewServer(view_store, "r") as server:
        server.serve_in_background()
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.url) as response:
            assert "script-src 'none'" in response.headers["Content-Security-Policy"]
            assert 'id="grid"' in response.read().decode()
        page = page_name("one", "m:codex", 0)
        with urllib.request.urlopen(server.url + page) as response:
            assert "First divergence" in response.read().decode()
        with urllib.request.urlopen(server.url + "static/view.css") as response:
            assert response.headers["Content-Type"].startswith("text/css")
        for path, status in (("cells/nope.html", 404), ("../replay.db", 404)):
            with pytest.raises(urllib.error.HTTPError) as failed:
                urllib.request.urlopen(server.url + path)
            assert failed.value.code == status
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(urllib.request.Request(server.url, data=b"x"))
        assert failed.value.code == 501
        with pytest.raises(urllib.error.HTTPError) as failed:  # a rebound name is refused
            urllib.request.urlopen(urllib.request.Request(
                server.url, headers={"Host": "attacker.example:80"}))
        assert failed.value.code == 403
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://localhost:{port}/") as response:
            assert response.status == 200
