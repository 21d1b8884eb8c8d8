"""Providers' prompt caching: Anthropic's breakpoints on the wire, cached tokens parsed as the
providers send them, cost and saving at cached prices, the call cache keeping them, and agent
steps that resend their conversation byte for byte, against the scripted server playing the
providers' prompt caches."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

from replay.agent.loop import AgentConfig, run_agent
from replay.environments import snapshots
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.histories.records import bundled_history
from replay.models import anthropic, openai
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.models.types import ChatRequest, ModelSpec
from replay.models.wire_checks import anthropic_problem
from replay.records.cell import CellId, CellResult
from replay.records.reply import Usage
from replay.records.spend import Spend, figure_text
from replay.sweep.progress import SweepProgress

from conftest import BASH_TOOL, bash_call, history, make_client, run_replay
from sweep_scripts import DEMO, TALLY, call, fix_turn, fixture_prompts, summarizer_scripts

EPHEMERAL = {"type": "ephemeral"}
LONG_TASK = "Fix square() in shapes/area.py. " + "Context line of the issue. " * 400


def marked(body: dict) -> list[str]:
    """Where the body's breakpoints are: `system`, `tool N`, or `turn T block B`."""
    found = [f"system {i}" for i, block in enumerate(body.get("system") or [])
             if block.get("cache_control") == EPHEMERAL]
    found += [f"tool {i}" for i, tool in enumerate(body.get("tools") or [])
              if tool.get("cache_control") == EPHEMERAL]
    for t, turn in enumerate(body["messages"]):
        found += [f"turn {t} block {b}" for b, block in enumerate(turn["content"])
                  if block.get("cache_control") == EPHEMERAL]
    return found


def test_anthropic_breakpoints_sit_where_intended(tmp_path: Path) -> None:
    no_system = history()[1:]
    with ScriptedServer(Script([{"content": "ok"}])) as server, \
            CallCache(tmp_path / "calls.db") as cache, \
            make_client(server.spec("claude", provider="anthropic"), cache) as client:
        for messages, tools in ((history(), [BASH_TOOL]), (no_system, [BASH_TOOL]),
                                (history()[:2], [])):
            client.complete(ChatRequest(messages=messages, tools=tools))
        bodies = [request.body for request in server.requests]
    # turns: user (task) | assistant (text, 2 tool_use) | user (2 tool_result, "Continue.")
    assert marked(bodies[0]) == ["system 0", "turn 0 block 0", "turn 2 block 1",
                                 "turn 2 block 2"]
    assert bodies[0]["messages"][2]["content"][1]["type"] == "tool_result"
    assert marked(bodies[1]) == ["tool 0", "turn 0 block 0", "turn 2 block 1", "turn 2 block 2"]
    assert marked(bodies[2]) == ["system 0", "turn 0 block 0"]
    assert all(len(marked(body)) <= anthropic.MAX_BREAKPOINTS for body in bodies)
    # one more mark is what the API refuses, and so does the scripted server
    assert anthropic_problem(bodies[0]) is None
    bodies[0]["messages"][1]["content"][0]["cache_control"] = EPHEMERAL
    assert anthropic_problem(bodies[0]) == ("A maximum of 4 blocks with cache_control may be "
                                            "provided. Found 5.")


def test_usage_is_parsed_as_the_providers_send_it() -> None:
    # Anthropic's prompt caching docs: the first call writes the prefix, the second reads it
    first = {"cache_creation_input_tokens": 188086, "cache_read_input_tokens": 0,
             "input_tokens": 21, "output_tokens": 393}
    again = {**first, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 188086}
    assert anthropic.parse_usage(first) == Usage(input_tokens=188107, output_tokens=393,
                                                 cache_write_tokens=188086)
    assert anthropic.parse_usage(again) == Usage(input_tokens=188107, output_tokens=393,
                                                 cached_tokens=188086)
    # OpenAI (prompt_tokens_details), Kimi K2 (both places), DeepSeek (its own field names)
    openai_usage = {"prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
                    "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0}}
    kimi = {"prompt_tokens": 1113, "completion_tokens": 9, "total_tokens": 1122,
            "cached_tokens": 1024, "prompt_tokens_details": {"cached_tokens": 1024}}
    deepseek = {"prompt_tokens": 1500, "completion_tokens": 20, "prompt_cache_hit_tokens": 1280,
                "prompt_cache_miss_tokens": 220}
    assert [openai.parse_usage(raw).cached_tokens for raw in (openai_usage, kimi, deepseek)] == [
        1920, 1024, 1280]
    assert openai.parse_usage(openai_usage).input_tokens == 2006


def test_cost_prices_cached_input_and_the_saving_is_the_difference() -> None:
    claude = ModelSpec(alias="c", provider="anthropic", model="m", base_url="http://x/v1",
                       price_in=3.0, price_out=15.0)
    usage = Usage(input_tokens=10_000, output_tokens=100, cached_tokens=6_000,
                  cache_write_tokens=3_000)
    # reads at 0.1x, writes at 1.25x, the rest at the base price
    assert claude.cost(usage) == pytest.approx((1_000 * 3 + 6_000 * 0.3 + 3_000 * 3.75
                                                + 100 * 15) / 1e6)
    assert claude.saving(usage) == pytest.approx((10_000 * 3 + 100 * 15) / 1e6
                                                 - claude.cost(usage))
    writes_only = Usage(input_tokens=4_000, cache_write_tokens=4_000)
    assert claude.saving(writes_only) == pytest.approx(-4_000 * 0.75 / 1e6)
    kimi = ModelSpec(alias="k", provider="openai", model="m", base_url="http://x/v1",
                     price_in=0.6, price_out=2.5, price_cached_in=0.15)
    plain = kimi.model_copy(update={"price_cached_in": None})
    hit = Usage(input_tokens=2_000, output_tokens=10, cached_tokens=1_024)
    assert kimi.cost(hit) == pytest.approx((976 * 0.6 + 1_024 * 0.15 + 10 * 2.5) / 1e6)
    assert plain.cached_price() == pytest.approx(0.3)  # OpenAI-compatible default: half


def _steps(client, messages: list[dict], replies: int) -> list:
    """Agent-like steps: each resends the conversation with the reply and its tool results."""
    responses = []
    for _ in range(replies):
        response = client.complete(ChatRequest(messages=list(messages), tools=[BASH_TOOL]))
        responses.append(response)
        messages += [response.message, *({"role": "tool", "tool_call_id": call["id"],
                                          "content": "ok"}
                                         for call in response.message["tool_calls"])]
    return responses


def test_an_anthropic_step_reads_the_previous_steps_prefix(tmp_path: Path) -> None:
    """Even after a reply of eleven tool calls (23 new blocks, past the API's 20-block
    lookback), the breakpoint where the previous request ended finds its prefix."""
    many = {"content": "Looking everywhere.",
            "tool_calls": [bash_call(f"c{i}", f"ls {i}") for i in range(11)]}
    messages = [{"role": "system", "content": "You are a careful engineer."},
                {"role": "user", "content": LONG_TASK}]
    with ScriptedServer(Script([many]), prompt_cache=True) as server, \
            CallCache(tmp_path / "calls.db") as cache, \
            make_client(server.spec("claude", provider="anthropic", price_in=3.0,
                                    price_out=15.0), cache) as client:
        first, second, third = (r.usage for r in _steps(client, messages, 3))
    assert first.cached_tokens == 0 and first.cache_write_tokens > 1024
    assert second.cached_tokens == first.cache_write_tokens
    assert third.cached_tokens == second.cached_tokens + second.cache_write_tokens
    assert third.input_tokens >= third.cached_tokens + third.cache_write_tokens
    assert client.stats.cached_tokens == second.cached_tokens + third.cached_tokens
    assert client.stats.saved == pytest.approx(sum(client.spec.saving(u)
                                                   for u in (first, second, third)))
    assert client.stats.saved > 0


def test_the_call_cache_keeps_the_prompt_cache_tokens_and_replays_without_them(
        tmp_path: Path) -> None:
    usage = {"input_tokens": 5000, "output_tokens": 50, "cached_tokens": 3000,
             "cache_write_tokens": 1500}
    request = ChatRequest(messages=[{"role": "user", "content": "q"}])
    with ScriptedServer(Script([{"content": "ok", "usage": usage}])) as server, \
            CallCache(tmp_path / "calls.db") as cache, \
            make_client(server.spec(provider="anthropic", price_in=1.0), cache) as client:
        made = client.complete(request)
        replayed = client.complete(request)
    row = sqlite3.connect(tmp_path / "calls.db").execute(
        "SELECT input_tokens, cached_tokens, cache_write_tokens, cost FROM model_calls").fetchone()
    assert row == (5000, 3000, 1500, pytest.approx(made.cost))
    assert replayed.from_cache and replayed.usage == made.usage == Usage(**usage)
    # the replay is not a provider call: the client counts the provider's cached tokens once
    assert (client.stats.calls, client.stats.cache_hits, client.stats.cached_tokens) == (1, 1, 3000)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_agent_steps_resend_their_conversation_byte_for_byte(tmp_path: Path,
                                                            provider: str) -> None:
    env = LocalBackend().start(DEMO[TALLY], load_recipe(DEMO[TALLY]))
    env.restore(snapshots.at_base(env, DEMO[TALLY].base_commit))
    turns = [{"content": f"Step {i}.", "tool_calls": [
        {"function": {"name": "bash", "arguments": {"command": f"echo {i}; seq 1 400"}}}]}
        for i in range(3)]
    with ScriptedServer(Script(turns, model="agent"), prompt_cache=True) as server, \
            CallCache(tmp_path / "calls.db") as cache, \
            make_client(server.spec("agent", provider=provider), cache) as client:
        trace = run_agent(client, env, bundled_history(DEMO[TALLY]).messages,
                          AgentConfig(max_steps=3))
        bodies = [request.body for request in server.requests]
    rows = sqlite3.connect(tmp_path / "calls.db").execute(
        "SELECT cached_tokens FROM model_calls ORDER BY rowid").fetchall()
    assert trace.steps == 3 and len(bodies) == 3
    for before, after in zip(bodies, bodies[1:], strict=False):
        for part in ("tools", "system"):
            assert _unmarked(after.get(part)) == _unmarked(before.get(part))
        sent = _unmarked(before["messages"])
        assert _unmarked(after["messages"])[:len(sent)] == sent
    cached = [row[0] for row in rows]
    assert cached[0] == 0 and 0 < cached[1] < cached[2]
    assert trace.cached_tokens == sum(cached)


def _unmarked(value: object) -> object:
    """`value` without its cache_control marks (they are not part of the prompt)."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(item) for item in value]
    return value


def test_the_progress_line_shows_the_cached_share_and_the_saving() -> None:
    out = io.StringIO()
    spent = [{"input_tokens": 900_000, "output_tokens": 2_000, "cached_tokens": 600_000,
              "cost": 0.30, "saved": 0.25},
             {"input_tokens": 300_000, "output_tokens": 1_400, "cached_tokens": 168_000,
              "cache_write_tokens": 12_000, "cost": 0.11, "saved": 0.16}]
    with SweepProgress(Console(file=out, width=300), 2) as progress:
        for index, record in enumerate(spent):
            progress.finished(CellResult(CellId(TALLY, "pre", "", index), "done", True,
                                         spent=Spend.of(record)), Counter({"preserved": 1}))
    expected = "1.2M tokens in (64% cached, saved $0.4100), 3.4k out, $0.4100"
    assert progress.status().endswith(expected)
    assert out.getvalue().splitlines()[-1].startswith("[2/2 cells] cells running 0")
    assert out.getvalue().rstrip().endswith(expected)


SEEN = "LOOKED-AROUND-7"


def _models_file(home: Path, base_url: str) -> dict[str, str]:
    """The agent on Anthropic's wire, the summarizer on OpenAI's, both on the scripted server."""
    path = home / ".config" / "replay" / "models.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'["agent"]\nprovider = "anthropic"\nmodel = "agent"\nbase_url = "{base_url}"\n'
        'price_in = 3.0\nprice_out = 15.0\n\n'
        f'["summ-a"]\nprovider = "openai"\nmodel = "summ-a"\nbase_url = "{base_url}"\n'
        'price_in = 1.0\nprice_out = 2.0\nprice_cached_in = 0.25\n')
    return {"HOME": str(home)}


def test_a_sweep_shows_the_cached_share_the_saving_and_the_speed(tmp_path: Path) -> None:
    """Each continuation takes two steps (look, then fix); the two summaries of one history
    share it as a prefix. The closing line counts the calls made with their seconds and output
    tokens per second, as the store keeps them (issue 25). A second run is answered from the
    store, a third (the continuations' files gone) runs its cells with every call replayed from
    the call cache: both spend nothing, cache nothing and make no call."""
    look = {"content": "Looking.", "tool_calls": [
        call("bash", command=f"echo {SEEN}; seq 1 400")]}
    agent = [Script([fix_turn([DEMO[TALLY]], tmp_path)], model="agent", seen=[SEEN]),
             Script([look], model="agent")]
    store = tmp_path / "runs" / "replay.db"
    args = ["prompt", "--agent-model", "agent", "--summarizer", "summ-a", "--prompts",
            "claude-code,kimi-code", "--instance", TALLY, "--temperature", "0", "--store",
            str(store), "--prompt-sources", str(fixture_prompts(tmp_path))]
    with ScriptedServer(*summarizer_scripts(), *agent, prompt_cache=True) as server:
        env = _models_file(tmp_path, server.base_url)
        done = run_replay(*args, "--run", "cached", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert server.count == 2 + 3 * 2
        again = run_replay(*args, "--run", "again", env=env)
        assert again.returncode == 0 and server.count == 8, again.stdout + again.stderr
        # without the continuations' files the cells run again, every call from the call cache
        shutil.rmtree(store.parent / "artifacts" / "continuations")
        replayed = run_replay(*args, "--run", "replayed", env=env)
        assert replayed.returncode == 0 and server.count == 8, replayed.stdout + replayed.stderr
        report = run_replay("report", "cached", "--store", str(store), env=env)
    calls = sqlite3.connect(store).execute(
        "SELECT provider, input_tokens, output_tokens, cached_tokens, cache_write_tokens, cost, "
        "seconds FROM model_calls").fetchall()
    prices = {"anthropic": (3.0, 15.0), "openai": (1.0, 2.0)}
    uncached = sum(i * prices[p][0] / 1e6 + o * prices[p][1] / 1e6 for p, i, o, *_ in calls)
    total_in, read = sum(row[1] for row in calls), sum(row[3] for row in calls)
    cost = sum(row[5] for row in calls)
    assert [p for p, _, _, cached, *_ in calls if cached].count("anthropic") >= 1  # PRE step 2
    assert [p for p, _, _, cached, *_ in calls if cached].count("openai") == 1  # 2nd summary
    share = f"{100 * read / total_in:.0f}% cached, saved ${uncached - cost:.4f}"
    final = [line for line in done.stdout.splitlines() if line.startswith("[3/3 cells]")]
    assert len(final) == 1 and share in final[0], done.stdout
    assert f"spend of run cached: {final[0].split(' | ')[-1]}" in done.stdout
    seconds = sum(row[6] for row in calls)
    assert len(calls) == 8 and all(row[6] > 0 for row in calls)
    made = (f"8 calls made, {figure_text(seconds / 8)} s/call, "
            f"{figure_text(sum(row[2] for row in calls) / seconds)} tok/s out "
            "(call cache replays not counted)")
    assert final[0].split(" | ")[-2] == made, final[0]
    assert "spend of run again: 0 tokens in, 0 out, $0.0000" in again.stdout
    assert "3 cell(s) finished: 3 run, 0 kept" in replayed.stdout, replayed.stdout
    for rerun in (again, replayed):
        closing = [line for line in rerun.stdout.splitlines() if line.startswith("[3/3 cells]")]
        assert len(closing) == 1, rerun.stdout
        assert " | 0 calls made (call cache replays not counted) | 0 tokens in" in closing[0]
    folder = store.parent / "reports" / "cached"
    assert report.returncode == 0, report.stderr
    spend = json.loads((folder / "report.json").read_text())["spend"]
    assert (spend["input_tokens"], spend["cached_tokens"]) == (total_in, read)
    assert spend["cost"] == pytest.approx(cost)
    assert spend["uncached_cost"] == pytest.approx(uncached)
    markdown = (folder / "report.md").read_text()
    assert "## Cost" in markdown and f"| {total_in:,} | {read:,} (" in markdown
