"""The study's per-task complete-input ceiling on the Hermes panel's real histories: its parts
counted by hand, enlarged to fit the serialized S, the actual lengths reported, strict
shrinkage against Full counted per arm, and an H alone that is not shorter than Full failed."""

from __future__ import annotations

from replay.compaction.carriers import post_messages
from replay.core.paths import instances_dir
from replay.histories.records import load_history_file
from replay.instances.records import Instance, load_suite
from replay.measures.probes.answering import Context
from replay.measures.probes.ceiling import measure, shrinkage, task_ceiling
from replay.measures.probes.files import ProbeSet, load_probe_file
from replay.records.history import History
from replay.records.summary import Summary

SUITE = "reme"


def task(name: str) -> tuple[Instance, History, ProbeSet]:
    instance = next(i for i in load_suite(SUITE).instances
                    if i.instance_id == f"reme__{name}-1")
    folder = instances_dir() / SUITE / instance.instance_id
    return (instance, load_history_file(folder / "history.json"),
            load_probe_file(folder / "probes.json"))


def test_the_ceiling_of_three_files_counted_by_hand() -> None:
    _, history, probes = task("three-files")
    roles = [m["role"] for m in history.messages]
    assert roles == ["system", "user", "assistant", "tool"]
    ceiling = task_ceiling(history, probes)
    # Qwen tokens, counted on the history's messages: the system prompt 159 and the study's
    # query 117 are the protected prompts with the probe message (96); the one unit,
    # `[output 1: read_file /testbed/README.md]` over `     1<TAB>workspace for the three-file
    # task`, is 24 rendered, so 20% of the evidence is 4, clamped to 64.
    assert (ceiling.prompt_tokens, ceiling.probe_tokens, ceiling.allowance,
            ceiling.largest_tokens, ceiling.reserve, ceiling.framing) == (276, 96, 64, 24, 64, 32)
    assert ceiling.base == 276 + 96 + 64 + 24 + 64 + 32 == 556
    # Full: 159 + 117, the assistant's remark "Let me read the workspace's README." (8), its
    # call's arguments {"path": "/testbed/README.md"} (10) and the output (10), then the probe.
    assert ceiling.full_tokens == 159 + 117 + 8 + 10 + 10 + 96 == 400


def context(instance: Instance, history: History, method: str, text: str,
            generation: int = 0) -> Context:
    messages = post_messages(Summary(method, text), history.messages,
                             instance.problem_statement, "/testbed")
    return Context(instance.instance_id, method, generation, messages)


def test_s_enlarges_the_ceiling_and_an_h_not_shorter_than_full_scores_zero() -> None:
    instance, history, probes = task("payment")
    long_s = "Summary:\n" + "the duplicate charge, its keys and the retry code. " * 400
    contexts = [Context(instance.instance_id, "full", 0, history.messages),
                context(instance, history, "m:claude-code", long_s),
                context(instance, history, "m:claude-code", "Summary:\nshort", 1),
                context(instance, history, "m:hermes-h", "Summary:\n## Critical Context\nok"),
                context(instance, history, "m:hermes-h", "Summary:\n" + ". " * 2600, 1),
                context(instance, history, "m:hermes-h+top:1", "Summary:\nfused")]
    contexts, ceilings = measure(contexts, {instance.instance_id: history},
                                 {instance.instance_id: probes})
    ceiling = ceilings[instance.instance_id]
    full, s_long, s_short, h_ok, h_long, fused = contexts
    assert ceiling.base == 3116 and ceiling.full_tokens == 2769 == full.length["input_tokens"]
    assert s_long.length["input_tokens"] == ceiling.enlarged == ceiling.tokens > ceiling.base
    assert s_long.length["within_ceiling"] and not s_long.length["shorter_than_full"]
    assert s_short.length["shorter_than_full"] and h_ok.length["shorter_than_full"]
    assert h_ok.messages is not None and h_ok.error is None
    assert h_long.messages is None and h_long.error == (
        f"summary: invalid: m:hermes-h: its complete input, {h_long.length['input_tokens']} "
        "tokens, is not shorter than Full's 2769")
    assert fused.messages is not None  # a fused arm is counted, never failed by the rule
    counts = {(s.method, s.cohort): (s.contexts, s.shorter, s.within_ceiling)
              for s in shrinkage(contexts, {instance.instance_id: "primary"})}
    assert counts == {("m:claude-code", "primary"): (2, 1, 2),
                      ("m:hermes-h", "primary"): (2, 1, 2),
                      ("m:hermes-h+top:1", "primary"): (1, 1, 1)}
