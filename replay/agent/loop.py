"""The fixed continuation agent: at most N steps of tool calls from a given message list.

A step is one model response; all its tool calls run in order. The message list *is* the
trajectory: the trace saved after every step holds it with each action, usage and the exit reason.
The agent speaks the protocol it is given (`protocols.py`): replay's tool calls, or
mini-swe-agent's text actions or bash calls ending with its submit sentinel.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.agent.protocols import (
    PROTOCOLS,
    FormatError,
    Interrupt,
    commands,
    observation,
    spoken,
    tools_for,
)
from replay.agent.tools import BASH_OUTPUT_LIMIT, ToolError, parse_arguments, run_tool
from replay.core.errors import HarnessError, InputError
from replay.core.paths import prompts_dir
from replay.environments.base import Environment
from replay.models.retry import ModelDeadlineExceeded
from replay.models.transport import ModelRefused, ModelTransientError
from replay.models.types import ChatRequest, Message, Model
from replay.records.trace import Action, Trace

NO_TOOL_CALL = ("Your response called no tool. Call a tool to continue, or `finish` when the "
                "fix is complete.")


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


def compacted(summary: str) -> str:
    """What tells a resumed agent that `summary` replaces its earlier work."""
    return load_prompt("compacted").format(summary=summary)


def resume_messages(problem_statement: str, summary: str, workdir: str) -> list[Message]:
    """The messages of a POST continuation with the summary-only carrier: the system prompt,
    and one user message with the issue and the summary."""
    system, task = task_messages(problem_statement, workdir)
    return [system, {"role": "user", "content": f"{task['content']}\n{compacted(summary)}"}]


def run_agent(model: Model, env: Environment, messages: list[Message], config: AgentConfig,
              trace_path: Path | None = None, seed_index: int = 0,
              on_step: Callable[[Trace], None] | None = None,
              protocol: str = "tool-calls") -> Trace:
    """Continue from `messages` for at most `config.max_steps` steps, speaking `protocol`.

    Returns the trace with exit reason `finished`, `step_limit`, `refused` or `error`. A request
    the server refuses for its content (a context too long) ends the run as `refused`: a limit
    of the agent, like the step limit, and the trace's `error` says so. A fault of the harness
    (model API after its retries, a broken environment) ends the run as `error` with its cause,
    naming the agent's request when a model call failed; it is never reported as a finished
    run. `on_step`, if given, is called with the trace after every step, its tool calls done
    (Phase A collection snapshots the tree there).
    """
    if protocol not in PROTOCOLS:
        raise InputError(f"unknown agent protocol {protocol!r}: use {', '.join(PROTOCOLS)}")
    trace = Trace(messages=spoken(copy.deepcopy(messages), protocol),
                  start_index=len(messages), protocol=protocol)
    started = time.monotonic()
    try:
        while trace.steps < config.max_steps and trace.exit_reason == "running":
            _step(model, env, trace, config, seed_index)
            if on_step is not None:
                on_step(trace)
            trace.seconds = time.monotonic() - started
            if trace_path is not None:
                trace.save(trace_path)
        if trace.exit_reason == "running":
            trace.exit_reason = "step_limit"
    except ModelRefused as exc:
        trace.exit_reason = "refused"
        trace.error = f"agent request refused: {exc}"
    except HarnessError as exc:
        trace.exit_reason = "error"
        call = isinstance(exc, (ModelTransientError, ModelDeadlineExceeded))
        trace.error = f"{type(exc).__name__}: {'agent request: ' if call else ''}{exc}"
    trace.seconds = time.monotonic() - started
    if trace_path is not None:
        trace.save(trace_path)
    return trace


def _step(model: Model, env: Environment, trace: Trace, config: AgentConfig,
          seed_index: int) -> None:
    request = ChatRequest(messages=trace.messages, tools=tools_for(trace.protocol),
                          temperature=config.temperature, max_tokens=config.max_tokens)
    response = model.complete(request, seed_index=seed_index)
    trace.steps += 1
    trace.input_tokens += response.usage.input_tokens
    trace.output_tokens += response.usage.output_tokens
    trace.cached_tokens += response.usage.cached_tokens
    trace.cost += response.cost
    message = dict(response.message)
    trace.messages.append(message)
    if trace.protocol != "tool-calls":
        _act_mini(env, trace, config, message)
        return
    calls = message.get("tool_calls") or []
    if not calls:
        trace.messages.append({"role": "user", "content": NO_TOOL_CALL})
        return
    for call in calls:
        name = call.get("function", {}).get("name", "")
        observation = _act(env, trace, config, name, call.get("function", {}).get("arguments"))
        trace.messages.append({"role": "tool", "tool_call_id": call.get("id", ""),
                               "content": observation})
        if name == "finish" and not trace.actions[-1].error:
            trace.exit_reason = "finished"


def _act(env: Environment, trace: Trace, config: AgentConfig, name: str, raw: Any) -> str:
    started = time.monotonic()
    arguments: dict[str, Any] = {}
    try:
        arguments = parse_arguments(raw)
        observation = run_tool(env, name, arguments, config.command_timeout)
    except ToolError as exc:
        trace.actions.append(Action(trace.steps, name, arguments, str(exc), 1,
                                    time.monotonic() - started, error=True))
        return f"error: {exc}"
    if observation.edited and observation.edited not in trace.files_edited:
        trace.files_edited.append(observation.edited)
    if observation.read:
        trace.files_read.append(observation.read)
    trace.actions.append(Action(trace.steps, name, arguments, observation.output,
                                observation.exit_code, time.monotonic() - started))
    return observation.output


def _act_mini(env: Environment, trace: Trace, config: AgentConfig, message: Message) -> None:
    """Run a mini-swe-agent response's commands; a format error or the submission ends the
    step with the messages its exception carries."""
    try:
        for call_id, command in commands(message, trace.protocol):
            started = time.monotonic()
            result = env.exec(command, timeout=config.command_timeout,
                              output_limit=BASH_OUTPUT_LIMIT)
            trace.actions.append(Action(trace.steps, "bash", {"command": command}, result.output,
                                        result.exit_code, time.monotonic() - started))
            trace.messages.append(observation(call_id, result.output, result.exit_code))
    except Interrupt as signal:
        trace.messages.extend(signal.messages)
        if not isinstance(signal, FormatError):
            trace.exit_reason = "finished"
