"""`replay collect` on the demo suite, with the scripted model server standing in for the agent."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from store_rows import rows

from replay.agent.loop import AgentConfig
from replay.core.errors import InputError
from replay.environments import snapshots
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.histories.collect import collect_trajectory
from replay.histories.records import find_history
from replay.instances.records import Instance, load_suite
from replay.judge.grading import patch_files
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.pipeline.cell import Settings, continue_and_grade
from replay.records.history import History
from replay.store import Store
from replay.store.histories import load_history, load_trajectory, stored_histories

from agent_scripts import fixing_turns, lost_turns
from conftest import make_client, run_replay

DEMO = load_suite("demo").instances
TALLY = next(i for i in DEMO if i.instance_id == "replay-demo__tally-1")
# Each collected run: read a file, write the fix, run the tests, finish; these input tokens.
REQUEST_TOKENS = [1000, 2000, 3000, 4000]
RULES = {"steps:2": 2, "tokens:3500": 3, "fraction:0.25": 1, "before-edit": 1}


@dataclass
class Collection:
    server: ScriptedServer
    store: Path
    done: CompletedProcess[str]

    def collect(self, *rules: str) -> CompletedProcess[str]:
        boundaries = [arg for rule in rules for arg in ("--boundary", rule)]
        return run_replay("collect", "--model", f"openai:agent@{self.server.base_url}",
                          *boundaries, "--max-steps", "6", "--store", str(self.store))

    def histories(self, instance_id: str | None = None) -> dict[str, History]:
        with Store.open(self.store) as store:
            return {f"{row.instance_id} {row.rule}": load_history(store, row.id)
                    for row in stored_histories(store, instance_id)}


def scripted_turns(instance: Instance, scratch: Path) -> list[dict]:
    turns = fixing_turns(instance, scratch)
    return [{**turn, "usage": {"input_tokens": tokens, "output_tokens": 40}}
            for turn, tokens in zip(turns, REQUEST_TOKENS, strict=True)]


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collection]:
    """The demo suite collected once under every rule, its server kept up for re-runs."""
    scratch = tmp_path_factory.mktemp("collect")
    scripts = [Script(scripted_turns(instance, scratch), model="agent",
                      contains=instance.problem_statement[:60]) for instance in DEMO]
    with ScriptedServer(*scripts) as server:
        result = Collection(server, scratch / "replay.db", None)  # type: ignore[arg-type]
        result.done = result.collect(*RULES)
        yield result


def test_collect_cuts_a_history_per_rule_for_every_demo_instance(collection: Collection) -> None:
    done = collection.done
    assert done.returncode == 0, done.stdout + done.stderr
    assert collection.server.count == 3 * len(REQUEST_TOKENS)
    assert done.stdout.count("4 steps, finished, resolved") == 3
    histories = collection.histories()
    assert sorted(histories) == sorted(f"{i.instance_id} {rule}" for i in DEMO for rule in RULES)
    for key, history in histories.items():
        rule = key.split()[1]
        assert history.boundary.step == RULES[rule] and history.boundary.rule == rule
        assert history.resolved is True and history.model.startswith("openai:agent@")
        assert history.messages[-1]["role"] == "tool"
        assert len([m for m in history.messages if m["role"] == "assistant"]) == RULES[rule]
    steps2 = histories[f"{TALLY.instance_id} steps:2"]
    assert steps2.boundary.tokens == 3000 and not steps2.boundary.tokens_estimated
    assert histories[f"{TALLY.instance_id} tokens:3500"].boundary.tokens == 4000


def test_collected_snapshots_restore_to_their_fingerprints(collection: Collection) -> None:
    for instance in DEMO:
        env = LocalBackend().start(instance, load_recipe(instance))
        base = snapshots.at_base(env, instance.base_commit)
        fixed_file = patch_files(instance.patch).all[0]
        for rule, history in collection.histories(instance.instance_id).items():
            env.restore(history.snapshot)
            assert snapshots.fingerprint(env, instance.base_commit) == \
                history.snapshot.fingerprint
            edited = f"b/{fixed_file}".encode() in history.snapshot.diff
            assert edited is (history.boundary.step >= 2), rule
            if history.boundary.rule == "before-edit":
                assert history.snapshot.fingerprint == base.fingerprint


def pre(history: History, turns: list[dict], folder: Path) -> bool | None:
    """PRE from `history` with a scripted agent (its own store: continuations are kept by key)."""
    recipe = load_recipe(TALLY)
    env = LocalBackend().start(TALLY, recipe)
    folder.mkdir()
    with ScriptedServer(Script(turns, model="agent")) as server, \
            Store.open(folder / "pre.db") as store, CallCache(folder / "pre.db") as cache, \
            make_client(server.spec("agent"), cache) as client:
        return continue_and_grade(TALLY, history, history.messages, "pre",
                                  Settings(server.spec("agent")), store,
                                  lambda _: (env, recipe), client).passed


def test_pre_from_a_collected_history_passes_where_the_agent_was_on_its_way(
        collection: Collection, tmp_path: Path) -> None:
    with Store.open(collection.store) as store:
        before_edit = find_history(TALLY, store=store, rule="before-edit")
        fixed = find_history(TALLY, store=store, rule="steps:2")
    rest = fixing_turns(TALLY, tmp_path)[1:]
    assert pre(before_edit, rest, tmp_path / "rest") is True
    assert pre(fixed, lost_turns(), tmp_path / "fixed") is True
    assert pre(before_edit, lost_turns(), tmp_path / "lost") is False


def test_collecting_again_makes_no_model_call_and_cuts_new_boundaries(
        collection: Collection) -> None:
    calls = collection.server.count
    again = collection.collect("steps:2", "steps:3")
    assert again.returncode == 0, again.stdout + again.stderr
    assert collection.server.count == calls
    assert again.stdout.count("(kept in the store)") == 3
    assert again.stdout.count("(already kept)") == 3
    assert len(collection.histories()) == 3 * (len(RULES) + 1)


def test_a_boundary_past_the_end_is_one_line_and_the_others_are_kept(
        collection: Collection) -> None:
    before = len(collection.histories())
    done = collection.collect("steps:1", "steps:9")
    assert done.returncode == 1, done.stdout + done.stderr
    missed = [line for line in done.stdout.splitlines() if "no history" in line]
    assert missed == [f"  steps:9        no history: {instance.instance_id}: boundary steps:9 is "
                      "past the end of the trajectory (4 steps)" for instance in DEMO]
    assert len(collection.histories()) == before + 3  # steps:1 of each instance


def test_one_boundary_that_never_lands_drops_no_other_history(tmp_path: Path) -> None:
    """Issue 16: `--boundary steps:2 --boundary before-edit` on trajectories that edit no file
    stored 0 histories; now the steps:2 histories are stored and before-edit is one line."""
    store = tmp_path / "replay.db"
    with ScriptedServer(Script(lost_turns(), model="agent")) as server:
        done = run_replay("collect", "--model", f"openai:agent@{server.base_url}",
                          "--instance", TALLY.instance_id, "--boundary", "steps:2",
                          "--boundary", "before-edit", "--store", str(store))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "steps:2        history " in done.stdout
    assert [line for line in done.stdout.splitlines() if "no history" in line] == [
        f"  before-edit    no history: {TALLY.instance_id}: boundary before-edit is past the "
        "end of the trajectory: no step edits a non-test source file"]
    with Store.open(store) as opened:
        assert [row.rule for row in stored_histories(opened, TALLY.instance_id)] == ["steps:2"]


def test_find_history_prefers_the_bundled_one_and_refuses_to_guess(
        collection: Collection) -> None:
    no_bundle = TALLY.model_copy(update={"bundle": None})
    with Store.open(collection.store) as store:
        assert find_history(TALLY, store=store).source == "written for the demo suite"
        chosen = find_history(TALLY, store=store, rule="fraction:0.25")
        assert find_history(no_bundle, store=store,
                            history_id=chosen.content_id()[:10]) == chosen
        with pytest.raises(InputError, match=r"stored histories for instance "
                                             r"replay-demo__tally-1: .*choose one by id"):
            find_history(no_bundle, store=store)
        with pytest.raises(InputError, match="no stored Phase A history for instance "
                                             "replay-demo__tally-1 with rule steps:7"):
            find_history(TALLY, store=store, rule="steps:7")
    with pytest.raises(InputError, match="has no Phase A history"):
        find_history(no_bundle)


def test_a_harness_fault_stores_no_trajectory(tmp_path: Path) -> None:
    with ScriptedServer(Script([{"fault": "500"}], model="agent")) as server, \
            Store.open(tmp_path / "r.db") as store, CallCache(tmp_path / "r.db") as cache, \
            make_client(server.spec("agent"), cache) as client:
        result = collect_trajectory(TALLY, LocalBackend(), client, "scripted", "agent",
                                    AgentConfig(max_steps=3), store)
        assert result.trajectory is None and "500" in (result.error or "")
        assert load_trajectory(store, "anything") is None
        assert rows(tmp_path / "r.db", "SELECT count(*) FROM trajectories") == [(0,)]


def test_replay_run_continues_from_a_collected_history(collection: Collection,
                                                       tmp_path: Path) -> None:
    rest = fixing_turns(TALLY, tmp_path)[1:]
    with ScriptedServer(Script(rest, model="agent")) as server:
        done = run_replay("cell", "--instance", TALLY.instance_id, "--arm", "pre",
                          "--history-rule", "before-edit", "--agent-model",
                          f"openai:agent@{server.base_url}", "--store", str(collection.store))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "tests pass" in done.stdout and server.count == len(rest)
    missing = run_replay("cell", "--instance", TALLY.instance_id, "--arm", "pre",
                         "--history-rule", "steps:99", "--agent-model",
                         "openai:agent@http://127.0.0.1:9/v1", "--store", str(collection.store))
    assert missing.returncode == 2
    assert "no stored Phase A history for instance replay-demo__tally-1" in missing.stderr
