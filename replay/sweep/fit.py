"""Whether a request fits a model's context window, estimated before anything is sent.

The estimate counts the request's JSON (messages and the agent's tool schemas) at three
characters a token: code, paths and JSON tokenize denser than prose (SmolLM2's tokenizer made
2,954 tokens of iniconf-1's history, 8,519 characters with the tools' 1,350, where four
characters a token says 2,467). A continuation also needs room for its steps: a history fits
an agent when its request takes at most `AGENT_SHARE` of the window.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from replay.agent.tools import TOOLS
from replay.core.errors import InputError
from replay.histories.records import find_history
from replay.instances.records import Instance
from replay.models.types import Message, ModelSpec
from replay.store import Store
from replay.sweep.run import Run

CHARS_PER_TOKEN = 3
AGENT_SHARE = 0.75  # the rest of the window is the continuation's room for its steps


def request_tokens(messages: Sequence[Message]) -> int:
    """The estimated prompt tokens of a request with `messages` and the agent's tools."""
    return (len(json.dumps(list(messages), ensure_ascii=False))
            + len(json.dumps(TOOLS))) // CHARS_PER_TOKEN


def fits_agent(messages: Sequence[Message], agent: ModelSpec) -> bool:
    """Whether a continuation from `messages` leaves the agent room for its steps (always, when
    its context window is not known)."""
    window = agent.context_window
    return window is None or request_tokens(messages) <= window * AGENT_SHARE


def overflows(messages: Sequence[Message], model: ModelSpec) -> int | None:
    """The estimated tokens of the request when they exceed `model`'s context window, else
    None."""
    found = request_tokens(messages)
    window = model.context_window
    return found if window is not None and found > window else None


def fitting(instances: Sequence[Instance], store: Store, rule: str | None, agent: ModelSpec,
            say: Callable[[str], None]) -> list[Instance]:
    """The default job's instances: those whose history (as `find_history` picks it) fits
    `agent` with room for its steps; a line says which were left out and why. Raises
    `InputError` when none fits."""
    kept = []
    for instance in instances:
        messages = find_history(instance, store=store, rule=rule).messages
        if fits_agent(messages, agent):
            kept.append(instance)
        else:
            say(f"left out {instance.instance_id}: its history (about "
                f"{request_tokens(messages):,} tokens) does not fit {agent.alias}'s context of "
                f"{agent.context_window:,} with room for its steps (name it with --instance to "
                "run it anyway)")
    if not kept:
        raise InputError(f"no history of the selection fits {agent.alias}'s context window")
    return kept


def context_warnings(run: Run) -> list[str]:
    """What the dry run warns of: a history longer than the agent's context window, and a
    summary request (history and prompt) longer than its summarizer's."""
    found = []
    agent = run.settings.agent
    for instance_id, history in sorted(run.histories.items()):
        if (tokens := overflows(history.messages, agent)) is not None:
            found.append(f"warning: {instance_id}'s history (about {tokens:,} tokens) exceeds "
                         f"the agent {agent.alias}'s context window of {agent.context_window:,}:"
                         " its PRE cells will be refused")
        for summarizer, chosen in sorted(run.summarizers.items()):
            backbone, prompt = chosen.backbone, chosen.prompt
            ask = [{"role": "user", "content": "\n".join((prompt.parts if prompt else {})
                                                         .values())}]
            if backbone is not None and (
                    tokens := overflows([*history.messages, *ask], backbone)) is not None:
                found.append(f"warning: {summarizer}'s summary request for {instance_id} (about "
                             f"{tokens:,} tokens) exceeds {backbone.alias}'s context window of "
                             f"{backbone.context_window:,}: it will be refused")
    return found
