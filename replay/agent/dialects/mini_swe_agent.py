"""What mini-swe-agent's two dialects share: its observations, its submit sentinel, its opening.

Each command's observation is mini-swe-agent's wrapper, `<returncode>` and `<output>` (a long
output keeps its head and tail). A command whose output starts with the submit sentinel
(`COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`, or `MINI_SWE_AGENT_FINAL_OUTPUT` before v1.x) ends the
run, as mini-swe-agent's own loop does. Control flow is by exceptions that carry the messages to
append. A POST keeps the history's own opening, verbatim: the messages before its first
response (the system message that asks for exactly one bash block, and the task message with the
issue and the sentinel).
"""

from __future__ import annotations

import json
import time
from typing import Any

from replay.agent.dialects.base import Opening
from replay.agent.tools import BASH_OUTPUT_LIMIT
from replay.core.errors import InputError
from replay.environments.base import Environment
from replay.models.types import Message
from replay.records.trace import Action, Turn

SUBMIT = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
OUTPUT_LIMIT = 10_000


class Interrupt(Exception):  # noqa: N818 (a control-flow signal, as in mini-swe-agent)
    """Ends a step early; `messages` are appended to the conversation."""

    def __init__(self, *messages: Message) -> None:
        super().__init__()
        self.messages = list(messages)


class FormatError(Interrupt):
    """The response did not hold exactly one action the dialect can run."""


class Submitted(Interrupt):
    """The agent ran the submit sentinel: its work is done."""


class MiniSweAgent:
    """The shared part of mini-swe-agent's dialects; `commands` is each one's own."""

    name = ""

    def commands(self, message: Message) -> list[tuple[str | None, str]]:
        """The (tool call id, command) pairs of a response; raises `FormatError` when it holds
        none the dialect can run."""
        raise NotImplementedError

    def act(self, env: Environment, step: int, message: Message, timeout: float) -> Turn:
        """Run the response's commands; a format error or the submission ends the step with the
        messages its exception carries."""
        messages: list[Message] = []
        actions: list[Action] = []
        try:
            for call_id, command in self.commands(message):
                started = time.monotonic()
                result = env.exec(command, timeout=timeout, output_limit=BASH_OUTPUT_LIMIT)
                actions.append(Action(step, "bash", {"command": command}, result.output,
                                      result.exit_code, time.monotonic() - started))
                messages.append(observation(call_id, result.output, result.exit_code))
        except Interrupt as signal:
            return Turn([*messages, *signal.messages], actions,
                        finished=not isinstance(signal, FormatError))
        return Turn(messages, actions)

    def opening(self, history: list[Message], problem_statement: str,
                workdir: str) -> Opening:
        """The history's messages before its first response; none is bad input."""
        first = next((index for index, message in enumerate(history)
                      if message.get("role") == "assistant"), len(history))
        kept = [dict(message) for message in history[:first]]
        if not kept:
            raise InputError(f"a {self.name} history needs the messages that opened it (its "
                             "system prompt and task) before its first response")
        return Opening(kept)


def command_of(call: dict[str, Any]) -> str:
    """The `command` argument of a `bash` tool call ("" when it has none)."""
    raw = call.get("function", {}).get("arguments") or "{}"
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return ""
    return str(value.get("command", "")) if isinstance(value, dict) else ""


def observation(call_id: str | None, output: str, exit_code: int) -> Message:
    """The message that answers one command, in mini-swe-agent's wrapper. Raises `Submitted`
    (carrying it) when the command's output starts with the submit sentinel."""
    lines = output.lstrip().splitlines()
    if exit_code == 0 and lines and lines[0].strip() in SUBMIT:
        rest = "\n".join(lines[1:])
        raise Submitted(_message(call_id, rest))
    if len(output) > OUTPUT_LIMIT:
        body = (f"<output_head>\n{output[:OUTPUT_LIMIT // 2]}\n</output_head>\n<elided_chars>\n"
                f"{len(output) - OUTPUT_LIMIT} characters elided\n</elided_chars>\n"
                f"<output_tail>\n{output[-OUTPUT_LIMIT // 2:]}\n</output_tail>")
    else:
        body = f"<output>\n{output}</output>"
    return _message(call_id, f"<returncode>{exit_code}</returncode>\n{body}")


def _message(call_id: str | None, content: str) -> Message:
    if call_id is None:
        return {"role": "user", "content": content}
    return {"role": "tool", "tool_call_id": call_id, "content": content}
