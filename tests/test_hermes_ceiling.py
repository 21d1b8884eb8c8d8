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

SUITE = "hermes-panel"


def task(name: str) -> tuple[Instance, History, ProbeSet]:
    instance = next(i for i in load_suite(SUITE).instances
                    if i.instance_id == f"hermes-panel__{name}-1")
    folder = instances_dir() / SUITE / instance.instance_id
    return (instance, load_history_file(folder / "history.json"),
            load_probe_file(folder / "probes.json"))


def test_the_ceiling_of_three_files_counted_by_hand() -> None:
    _, history, probes = task("three-files")
    roles = [m["role"] for m in history.messages]
    assert roles == ["system", "user", "assistant", "tool"]
    ceiling = task_ceiling(history, probes)
    # Token pieces (word runs and single punctuation marks), counted on the history's messages:
    # the system prompt 155 and the task 56 are the protected prompts with the probe message
    # (61); the one unit, `[output 1: bash cat README.md]` over `exit code: 0` and `workspace
    # for the three-file task`, is 21 (header 10, text 4 + 7), so 20% of the evidence is 4,
    # clamped to 64.
    assert (ceiling.prompt_tokens, ceiling.probe_tokens, ceiling.allowance,
            ceiling.largest_tokens, ceiling.reserve, ceiling.framing) == (211, 61, 64, 21, 64, 32)
    assert ceiling.base == 211 + 61 + 64 + 21 + 64 + 32 == 453
    # Full: 155 + 56, the assistant's remark "Let me read the README." (6), its call's arguments
    # {"command": "cat README.md"} (12) and the output (11), then the probe (61).
    assert ceiling.full_tokens == 155 + 56 + 6 + 12 + 11 + 61 == 301


def context(instance: Instance, history: History, method: str, text: str,
            generation: int = 0) -> Context:
    messages = post_messages(Summary(method, text), history.messages,
                             instance.problem_statement, "/testbed")
    return Context(instance.instance_id, method, generation, messages)


def test_s_enlarges_the_ceiling_and_an_h_not_shorter_than_full_scores_zero() -> None:
    instance, history, probes = task("payment")
    long_s = "Summary:\n" + "the declined charge, its region and the account. " * 400
    contexts = [Context(instance.instance_id, "full", 0, history.messages),
                context(instance, history, "m:claude-code", long_s),
                context(instance, history, "m:claude-code", "Summary:\nshort", 1),
                context(instance, history, "m:hermes-h", "Summary:\n## Critical Context\nok"),
                context(instance, history, "m:hermes-h", "Summary:\n" + ". " * 2600, 1),
                context(instance, history, "m:hermes-h+top:1", "Summary:\nfused")]
    ceilings = measure(contexts, {instance.instance_id: history},
                       {instance.instance_id: probes})
    ceiling = ceilings[instance.instance_id]
    full, s_long, s_short, h_ok, h_long, fused = contexts
    assert ceiling.base == 3228 and ceiling.full_tokens == 2892 == full.length["input_tokens"]
    assert s_long.length["input_tokens"] == ceiling.enlarged == ceiling.tokens > ceiling.base
    assert s_long.length["within_ceiling"] and not s_long.length["shorter_than_full"]
    assert s_short.length["shorter_than_full"] and h_ok.length["shorter_than_full"]
    assert h_ok.messages is not None and h_ok.error is None
    assert h_long.messages is None and h_long.error == (
        f"summary: invalid: m:hermes-h: its complete input, {h_long.length['input_tokens']} "
        "tokens, is not shorter than Full's 2892")
    assert fused.messages is not None  # a fused arm is counted, never failed by the rule
    counts = {(s.method, s.cohort): (s.contexts, s.shorter, s.within_ceiling)
              for s in shrinkage(contexts, {instance.instance_id: "primary"})}
    assert counts == {("m:claude-code", "primary"): (2, 1, 2),
                      ("m:hermes-h", "primary"): (2, 1, 2),
                      ("m:hermes-h+top:1", "primary"): (1, 1, 1)}
