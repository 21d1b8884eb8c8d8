"""The fixed continuation agent: at most N steps of tool calls from a given message list.

A step is one model response; all its tool calls run in order. The message list *is* the
trajectory: the trace saved after every step holds it with each action, usage and the exit reason.
The agent speaks the dialect it is given (`dialects/`): replay's tool calls, or
mini-swe-agent's text actions or bash calls ending with its submit sentinel.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from replay.agent import dialects
from replay.agent.dialects.base import Dialect
from replay.core.errors import Fault, HarnessError
from replay.core.paths import prompts_dir
from replay.core.vocab import ActionFormat, ExitReason
from replay.environments.base import Environment
from replay.models.retry import ModelDeadlineExceeded
from replay.models.transport import ModelRefused, ModelTransientError
from replay.models.types import ChatRequest, Message, Model
from replay.records.trace import Trace


@dataclass(frozen=True)
class AgentConfig:
    """The fixed agent's settings."""

    max_steps: int = 8
    command_timeout: float = 120.0
    temperature: float = 0.0
    max_tokens: int = 4096


def load_prompt(name: str) -> str:
    """A prompt of the continuation agent from prompts/agent/."""
    return (prompts_dir() / "agent" / f"{name}.md").read_text(encoding="utf-8")


def task_messages(problem_statement: str, workdir: str) -> list[Message]:
    """The opening messages of a task: the agent's system prompt and the issue."""
    return [
        {"role": "system", "content": load_prompt("system").format(workdir=workdir)},
        {"role": "user", "content": load_prompt("task").format(
            workdir=workdir, problem_statement=problem_statement)},
    ]


def run_agent(model: Model, env: Environment, messages: list[Message], config: AgentConfig,
              keep: Callable[[Trace], None] | None = None, seed_index: int = 0,
              on_step: Callable[[Trace], None] | None = None,
              dialect: str = ActionFormat.TOOL_CALLS) -> Trace:
    """Continue from `messages` for at most `config.max_steps` steps, speaking `dialect`
    (`replay.agent.dialects`).

    Returns the trace with exit reason `finished`, `step_limit`, `refused` or `error`. A request
    the server refuses for its content (a context too long) ends the run as `refused`: a limit
    of the agent, like the step limit, and the trace's `error` says so. A fault of the harness
    (model API after its retries, a broken environment) ends the run as `error` with its cause,
    naming the agent's request when a model call failed; it is never reported as a finished
    run (a step the harness broke in keeps its response, not its actions). `on_step`, if
    given, is called with the trace after every step, its tool calls done (Phase A collection
    snapshots the tree there); `keep`, if given, keeps it after every step and at the end
    (the store's `Spool.trace`: a killed run leaves its last step's trace).
    """
    speaking = dialects.dialect(dialect)
    trace = Trace(messages=speaking.spoken(copy.deepcopy(messages)),
                  start_index=len(messages), dialect=speaking.name)
    started = time.monotonic()
    try:
        while trace.steps < config.max_steps and trace.exit_reason == ExitReason.RUNNING:
            trace = _respond(model, trace, config, seed_index, speaking)
            trace = trace.acted(speaking.act(env, trace.steps, trace.messages[-1],
                                             config.command_timeout))
            trace = replace(trace, seconds=time.monotonic() - started)
            if on_step is not None:
                on_step(trace)
            if keep is not None:
                keep(trace)
        if trace.exit_reason == ExitReason.RUNNING:
            trace = trace.ended(ExitReason.STEP_LIMIT)
    except ModelRefused as exc:
        trace = trace.ended(ExitReason.REFUSED, f"agent request refused: {exc}")
    except HarnessError as exc:
        call = isinstance(exc, (ModelTransientError, ModelDeadlineExceeded))
        fault = Fault.of(exc, "agent request" if call else "")
        trace = trace.ended(ExitReason.ERROR, f"{type(exc).__name__}: {fault.detail}", fault)
    trace = replace(trace, seconds=time.monotonic() - started)
    if keep is not None:
        keep(trace)
    return trace


def _respond(model: Model, trace: Trace, config: AgentConfig, seed_index: int,
             speaking: Dialect) -> Trace:
    """The trace with the model's next response."""
    request = ChatRequest(messages=trace.messages, tools=speaking.tools(),
                          temperature=config.temperature, max_tokens=config.max_tokens)
    response = model.complete(request, seed_index=seed_index)
    usage = response.usage
    return trace.responded(dict(response.message), usage.input_tokens, usage.output_tokens,
                           usage.cached_tokens, response.cost)
