"""Every content identity of replay is the one canonical-JSON digest (replay.core.digest), and
every key is byte for byte the key that main at 529a986 computed for the same content, so the
caches of stores written before still answer (the hex values below were computed there)."""

from __future__ import annotations

from replay.agent.loop import AgentConfig
from replay.compaction.sources import PromptText
from replay.compaction.summarize import parse_summarizer
from replay.core.digest import canonical_json, chained, digest, sha256_hex
from replay.environments.builds import build_key
from replay.environments.docker_images import _key as image_key
from replay.environments.recipes import Recipe
from replay.histories.collect import collection_key
from replay.histories.importers.rebuild import import_key
from replay.histories.importers.recorded import Recorded
from replay.instances.records import Instance
from replay.models.cache import call_request, refusal_key, request_key
from replay.models.prompt_cache import _block_prefixes as block_prefixes
from replay.models.types import ChatRequest, ModelSpec
from replay.pipeline.cell import Settings
from replay.pipeline.continuation import Start
from replay.pipeline.summary import Summarizer, summary_key
from replay.records.history import History
from replay.records.plan import PlannedHistory
from replay.records.snapshot import Snapshot
from replay.report.web.pages import page_name
from replay.sweep.plan import Plan

INSTANCE = Instance(instance_id="owner__name-7", repo="owner/name", base_commit="0123456789abcdef",
                    patch="diff --git a/x b/x\n", test_patch="diff --git a/t b/t\n",
                    problem_statement="Ünïcode — “quotes” break parse()", FAIL_TO_PASS=["t::a"],
                    PASS_TO_PASS=[], version="1.0")
MESSAGES = [{"role": "system", "content": "Be careful."},
            {"role": "user", "content": "Fix parse() — ça casse: 日本語"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a.py\nb.py"}]
SNAPSHOT = Snapshot(base_commit="0123456789abcdef", diff=b"diff --git a/a.py b/a.py\n",
                    fingerprint="f1e2d3c4b5a6")
HISTORY = History(instance_id="owner__name-7", messages=MESSAGES, snapshot=SNAPSHOT,
                  boundary={"rule": "steps:2", "step": 2, "tokens": 99}, model="m", source="s")
MIMIC = HISTORY.model_copy(update={"dialect": "mini-swe-agent"})
SPEC = ModelSpec(alias="summ", provider="openai", model="summ-1", base_url="http://127.0.0.1:9/v1",
                 temperature=0.5, max_tokens=512)
REQUEST = ChatRequest(messages=MESSAGES, temperature=1.0, max_tokens=256, seed=3)
CONFIG = AgentConfig(max_steps=5, temperature=1.0)
PROMPT = PromptText(name="claude-code", agent="claude-code", registry="npm", package="p",
                    version="1.2.3", digest="sha512-x", parts={"user": "Summarize — now."},
                    synced_at="2026-01-01T00:00:00Z")
PLAN = Plan(kind="backbone", agent="agent", agent_id="openai:agent@http://127.0.0.1:9/v1",
            temperature=1.0, prompt_sources="/tmp/sources.toml", instances=("owner__name-7",),
            summarizers=("summ:claude-code", "anchor_index"),
            histories=(PlannedHistory(instance_id="owner__name-7", id="abc", rule="steps:2"),))
RECIPE = Recipe(repo="owner/name", version="1.0", python="3.11", packages=["pytest==8.0", "naïve"],
                install="pip install -e .", env={"LANG": "C.UTF-8"})


def _summary(summarizer: str, backbone: ModelSpec | None, judge: ModelSpec | None = None) -> str:
    chosen = Summarizer(parse_summarizer(summarizer), backbone, PROMPT if backbone else None,
                        judge, 1.0)
    return summary_key(chosen, HISTORY, 1)


def test_the_one_digest_is_sha256_of_canonical_json() -> None:
    value = {"b": [1, 2.5, None, True], "a": {"z": "é", "y": "—"}}
    assert canonical_json(value) == '{"a":{"y":"—","z":"é"},"b":[1,2.5,null,true]}'
    assert digest(value) == "6ea298a8529b30f8db760b13457c9c8d6ca6b08b1f35664d4c2cdd8044d6048f"
    # the form the environments' keys were first hashed in: json.dumps's separators, ASCII
    assert digest([1, "é", {"b": 1, "a": 2}], spaced=True) == (
        "2ba2cab999293f42bc3dd78ab2e3edbc56e34f12847b1482b256241af690fcb9")


def test_every_key_is_the_key_main_computed() -> None:
    asked = call_request(SPEC, REQUEST, 2)
    keys = {
        "cache_key": request_key(asked),
        "refusal_key": refusal_key(asked),
        "content_id": HISTORY.content_id(),
        "continuation_key": Start.of(HISTORY, MESSAGES, "openai:a@u", CONFIG, 1).key,
        "continuation_key mini": Start.of(MIMIC, MESSAGES, "openai:a@u", CONFIG, 0).key,
        "summary_key backbone": _summary("summ:claude-code", SPEC),
        "summary_key mechanical": _summary("anchor_index", None),
        "summary_key fused": _summary("summ:claude-code+top:3@summ", SPEC, SPEC),
        "collection_key": collection_key(INSTANCE, "openai:a@u", CONFIG, 2),
        "import_key": import_key(Recorded(format="mini-swe-agent", instance_id="owner__name-7",
                                          model="gpt-x", messages=MESSAGES, opening=2, steps=[]),
                                 INSTANCE),
        "plan digest": digest(PLAN.frame()),
        "plan name": PLAN.default_name(),
        "recipe digest": RECIPE.digest(),
        "image key": image_key("replay-base:bookworm", "3.11", ["a", "b"], {"K": "v"}),
        "page name": page_name("owner__name-7", "summ:claude-code", 1),
        "agent key": Settings(agent=SPEC).agent_key,
        "build key": build_key(INSTANCE, RECIPE),
        "snapshot diff": SNAPSHOT.diff_sha256,
    }
    assert keys == {
        "cache_key": "63edf1cdfd633edff60130c457d9966120131b3b87fb556931fae3d9d9f56390",
        "refusal_key": "20a299a11f92745f0fe0deae22b4af7d18544a5216b4845d00835a23e1ad714d",
        "content_id": "73047343b00491653701695c12fbf13ca1289ddd300c9d9fcc96fcb5a2623500",
        "continuation_key": "945304c5e2a06d4cd6b74d62363a9bbddf32936d972808dc0f9492293cff4c3e",
        "continuation_key mini": (
            "8b046b934a0cb7f611989d4d082e1c64c2d916b247a89c4d722779542ff72a0c"),
        "summary_key backbone": "478668f3409b1bdb7fc99c86a524443c927f56ffa8d3d5cfefc4e84f736b1112",
        "summary_key mechanical": (
            "c87a82013b7bf3085a169efeb235fdd45e0f095b12fc1c8e54140fa51ed926eb"),
        # fused: FUSION_VERSION 2 (budgets in Qwen tokens)
        "summary_key fused": "170073c06cbb3d5f995db691d0a3bfa21e2e748ce02aab35c8b55869f228fbb6",
        "collection_key": "d82112adae9fdd7e4821b8294ac37bbd11888f29dcf485069eb321c17e2d977e",
        "import_key": "ea9b2f7a249f0cd0be5434e9d8136e5b892f1cbbc75fecb47cf6de915d094c19",
        "plan digest": "b7b0d5ef9bfb87fcf30bd4cf7a56a68cd129c61200ec4b60f79d5eb8ef813dd4",
        "plan name": "backbone-e902b9e8a2",
        "recipe digest": "399a1a5b9530",
        "image key": "4b6841ccf4ab",
        "page name": "cells/owner__name-7.summ_claude-code.s1.3f4c31f2.html",
        "agent key": 'openai:summ-1@http://127.0.0.1:9/v1 {"max_tokens": 512, "temperature": 0.5}',
        "build key": "b567cd8e01eb",
        "snapshot diff": sha256_hex(b"diff --git a/a.py b/a.py\n"),
    }


def test_a_prompt_caches_prefixes_are_keyed_as_main_keyed_them() -> None:
    body = {"system": "Be careful.", "tools": [{"name": "bash"}], "messages": [
        {"role": "user", "content": [{"type": "text", "text": "x é",
                                      "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": "ok"}]}
    assert block_prefixes(body) == [
        ("da6773e9633b0bc29bd3cd84e41cb885c45ae3ae003ffe795c460c260dcbe7f3", 3, False),
        ("87d62a2b91fdb524708c2325672f7738444bfc58e6d61c21de4dd6ce91ac22cc", 12, False),
        ("83946bc18e8dad85de4057390ea43cc6b360ceffe4e03d096d65455484ae3d1c", 23, True),
        ("5f4453dcab4ef46dde55ae0d7a8c1ba54faedd36d5f8d88800e3e50c63a1e7ed", 34, False)]


def test_raw_content_and_chained_digests() -> None:
    assert sha256_hex("abc") == sha256_hex(b"abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    first, both = chained([{"a": 1}, [2]])
    assert first == (digest({"a": 1}), 7)
    assert both == (sha256_hex('{"a":1}[2]'), 10)
