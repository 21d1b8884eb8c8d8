"""What a probe run loads: each history with its probes, and the models and prompts of the
methods."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from replay.compaction.sources import PromptText
from replay.compaction.summarize import parse_summarizer
from replay.errors import InputError
from replay.histories.records import History, find_history
from replay.instances.records import Instance
from replay.measures.probes.answering import FULL, Inputs
from replay.measures.probes.files import ProbeSet, probes_for
from replay.models.registry import resolve
from replay.models.types import ModelSpec
from replay.store import Store


def load_inputs(instances: Sequence[Instance], methods: Sequence[str], carrier: str,
                store: Store, given: list[ProbeSet],
                load_prompt: Callable[[str], PromptText]) -> tuple[Inputs, list[str]]:
    """The inputs of a probe run, and the instances left out because their history has no
    probes. Bad input: an unknown method or model, a probe file for another history or for an
    instance not selected, or no probe at all."""
    histories: dict[str, History] = {}
    probes: dict[str, ProbeSet] = {}
    skipped = []
    for instance in instances:
        history = find_history(instance, store=store)
        found = probes_for(instance, history, given)
        if found is None:
            skipped.append(instance.instance_id)
            continue
        histories[instance.instance_id], probes[instance.instance_id] = history, found
    strays = sorted({g.instance_id for g in given} - {i.instance_id for i in instances})
    if strays:
        raise InputError(f"probes given for {', '.join(strays)}, which the selection does not "
                         "hold")
    if not histories:
        raise InputError("no history of the selection has probes (bundled probes.json beside "
                         "a history, or --probes FILE)")
    backbones: dict[str, ModelSpec | None] = {}
    prompts: dict[str, PromptText | None] = {}
    judges: dict[str, ModelSpec | None] = {}
    for method in methods:
        if method == FULL:
            continue
        name = parse_summarizer(method)
        backbones[method] = resolve(name.backbone) if name.backbone else None
        prompts[method] = load_prompt(name.source_prompt) if name.source_prompt else None
        judges[method] = resolve(name.fused.judge) if name.fused else None
    chosen = {i.instance_id: i for i in instances if i.instance_id in histories}
    return Inputs(chosen, histories, probes, list(methods), carrier, prompts, backbones,
                  judges), skipped
