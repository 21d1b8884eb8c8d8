"""Every model call of a cell is kept with it by its key, and the web view and `replay report
--cells` list them all, with their cost, whatever the models' settings and the agent's action
format (issue 22: the view used to rebuild the requests and missed every agent step when the
agent had settings, and every call of a mini-swe-agent history)."""

from __future__ import annotations

import re
from pathlib import Path

from replay import api
from replay.compaction.summarize import parse_summarizer
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.environments.snapshots import at_base
from replay.instances.records import Instance
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.pipeline.cell import CellTask, Settings, run_cell
from replay.pipeline.summary import Summarizer
from replay.records.cell import CellId
from replay.report.calls import cell_calls
from replay.report.tables import build
from replay.report.web.data import cell_view, read_store
from replay.store import Store

from agent_scripts import mini_agent, mini_history
from conftest import make_client
from demo_sweep import environment, printed_report, sweep_options
from sweep_scripts import STOCKROOM, agent_scripts, fixture_prompts, summarizer_scripts

# The settings of the README's llama.cpp recipe: they change every request the agent sends.
AGENT_SETTINGS = 'tool_choice = "required"\nmax_tokens = 512\n'


def _models(home: Path, base_url: str) -> dict[str, str]:
    tables = [f'["{alias}"]\nprovider = "openai"\nmodel = "{alias}"\nbase_url = "{base_url}"\n'
              f'price_in = 1.0\nprice_out = 2.0\n{AGENT_SETTINGS if alias == "agent" else ""}'
              for alias in ("agent", "summ-a")]
    path = home / ".config" / "replay" / "models.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(tables))
    return {"HOME": str(home)}


def test_every_call_of_a_sweep_with_agent_settings_is_listed_with_its_cost(
        tmp_path: Path) -> None:
    store = tmp_path / "store" / "replay.db"
    catalogue = fixture_prompts(tmp_path)
    with ScriptedServer(*summarizer_scripts(), *agent_scripts(tmp_path)) as server, \
            environment(_models(tmp_path, server.base_url)):
        plan = api.plan("backbone", api.summarizers(["summ-a"], "claude-code"), "agent",
                        ids=[STOCKROOM], prompt_sources=catalogue)
        done = api.sweep(plan, sweep_options(store), "r")
        assert done.code == 0, done.result
        sent = len(server.requests)
    printed = printed_report(store, "r", cells=True)
    assert sent >= 3
    with read_store(store, "r") as (kept, run):
        report = build(kept, run)
        listed = [call for calls in report.calls.values() for call in calls]
        view = cell_view(kept, report, STOCKROOM, report.plan.summarizers[0], 0)
    # a fresh store answers nothing from the cache: every request sent is one call listed
    assert len(listed) == sent and all(call.found and call.cost > 0 for call in listed)
    assert [(call.arm, call.what) for call in view.calls] == [
        ("pre", "step 1"), ("post", "summary"), ("post", "step 1")]
    assert all(call.found and call.model == ("summ-a" if call.what == "summary" else "agent")
               for call in view.calls)
    table = printed[printed.index("model calls per cell"):]
    assert table.count("step 1") == 2 and table.count("summary") >= 1
    assert "not in the store" not in table and "kept before" not in table
    # each call's seconds and output tokens per second, as the call cache timed it
    assert all(call.latency is not None and call.latency > 0 for call in listed)
    for call in listed:
        figures = re.compile(rf"{call.latency:.2f} +│ {call.output_tokens / call.latency:.1f} ")
        assert any(call.what in line and figures.search(line) for line in table.splitlines())


def test_every_call_of_a_mini_swe_agent_cell_is_kept_with_it(tiny: Instance,
                                                             tmp_path: Path) -> None:
    """A continuation in mini-swe-agent's text actions (the compact-bench histories' format)
    sends no tools: its steps are found by the keys kept with it, not by rebuilding them."""
    recipe = load_recipe(tiny)
    env = LocalBackend().start(tiny, recipe)
    history = mini_history(tiny.instance_id, tiny.problem_statement,
                           at_base(env, tiny.base_commit))
    path = tmp_path / "replay.db"
    with ScriptedServer(*mini_agent()) as server, Store.open(path) as store, \
            CallCache(path) as cache:
        settings = Settings(server.spec("agent").model_copy(update={"max_tokens": 512}),
                            steps=4)
        results = [run_cell(CellTask(CellId(tiny.instance_id, arm, summarizer, 0), tiny,
                                     history,
                                     Summarizer(parse_summarizer(summarizer)) if summarizer
                                     else None),
                            settings, store, lambda _: (env, recipe),
                            lambda spec: make_client(spec, cache))
                   for arm, summarizer in (("pre", ""), ("post", "anchor_index"))]
        sent = len(server.requests)
        listed = [cell_calls(store, result) for result in results]
    assert [result.passed for result in results] == [True, True]
    assert [[call.what for call in calls] for calls in listed] == [["step 1", "step 2"]] * 2
    assert sum(map(len, listed)) == sent
    assert all(call.found and call.model == "agent" for calls in listed for call in calls)
