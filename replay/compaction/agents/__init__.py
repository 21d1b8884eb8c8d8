"""Production compaction agents, one class each, registered by name.

An agent (`base.CompactionAgent`) says how its compaction prompt is sent to the summarizer's
model, how the reply becomes the summary (its post-processing), how many model calls one summary
takes at most, and its `native` carrier: how the agent itself brings the summary back (what it
wraps the summary in and which messages it keeps). Each is used the way its agent uses it, as far
as REFERENCE.md records it:

- `claude-code`, `codex`, `kimi-code`: the history as it is, then the prompt as a final user
  message; Claude Code's reply drops `<analysis>` and turns `<summary>` into "Summary:".
- `gemini-cli`: the prompt is the system instruction over the history; a second call asks the
  model to check its snapshot against the history and returns the refined one.
- `opencode`: its system text replaces the agent's system prompt; its user template ends the
  history.
- `hermes`, `hermes-h`: Hermes' own compressor code builds one user message from the serialized
  history (`replay.compaction.hermes`); `hermes-h` is the study's budgeted H.

`BUILTIN` maps each built-in name to the module that defines it (imported when first asked for);
`register` adds an agent from elsewhere, so a new agent is one new file.
"""

from __future__ import annotations

from importlib import import_module

from replay.compaction.agents.base import CompactionAgent
from replay.core.errors import InputError

BUILTIN = {"claude-code": "claude_code", "codex": "codex", "gemini-cli": "gemini_cli",
           "opencode": "opencode", "kimi-code": "kimi_code", "hermes": "hermes",
           "hermes-h": "hermes"}
_ADDED: dict[str, CompactionAgent] = {}


def register(agent: CompactionAgent) -> CompactionAgent:
    """Add a compaction agent under its name (one not built in); returns it."""
    if agent.name in BUILTIN:
        raise InputError(f"compaction agent {agent.name!r} is built in")
    _ADDED[agent.name] = agent
    return agent


def names() -> tuple[str, ...]:
    """Every compaction agent's name, the built-in ones first."""
    return (*BUILTIN, *_ADDED)


def agent(name: str) -> CompactionAgent:
    """The compaction agent named `name`; an unknown name is bad input."""
    if name in _ADDED:
        return _ADDED[name]
    if name not in BUILTIN:
        raise InputError(f"unknown compaction agent {name!r}: use {', '.join(names())}")
    module = import_module(f"{__name__}.{BUILTIN[name]}")
    found: CompactionAgent = module.AGENTS[name]
    return found
