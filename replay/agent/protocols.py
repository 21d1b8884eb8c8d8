"""Action protocols: how the agent's responses become commands, and when its work is done.

A continuation speaks the protocol its history was written in (`History.protocol`):

- `tool-calls`: replay's tools (`bash`, `read_file`, `write_file`, `edit_file`, `finish`);
  `finish` ends the run (the loop in `loop.py`).
- `mini-swe-agent-text`: mini-swe-agent's text actions. Each response holds exactly one bash
  block (```bash, or ```mswea_bash_command from v2); its observation comes back as a user
  message, `<returncode>` and `<output>`; a response with no block or several gets
  mini-swe-agent's format error. A command whose output starts with the submit sentinel
  (`COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`, or `MINI_SWE_AGENT_FINAL_OUTPUT` before v1.x) ends
  the run, as mini-swe-agent's own loop does.
- `mini-swe-agent-tools`: mini-swe-agent v2's `bash` tool calls, the same observations as tool
  messages, the same sentinel.

Imported histories are stored as tool calls; `spoken` turns them back into the text the agent
wrote and read. Control flow is by exceptions that carry the messages to append.
"""

from __future__ import annotations

import json
import re
from typing import Any

from replay.agent.tools import TOOLS
from replay.models.types import Message

PROTOCOLS = ("tool-calls", "mini-swe-agent-text", "mini-swe-agent-tools")
SUBMIT = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
BLOCK = re.compile(r"```(?:mswea_bash_command|bash)[ \t]*\n(.*?)\n?```", re.S)
FORMAT_ERROR = ("Please always provide EXACTLY ONE action in triple backticks, found {count} "
                "actions.\nIf you have completed your assignment, please consult the first "
                "message about how to submit your solution.")
NO_BASH_CALL = ("Tool call error: every response needs to call the `bash` tool at least once. "
                "If you have completed your assignment, please consult the first message about "
                "how to submit your solution.")
OUTPUT_LIMIT = 10_000


class Interrupt(Exception):  # noqa: N818 (a control-flow signal, as in mini-swe-agent)
    """Ends a step early; `messages` are appended to the conversation."""

    def __init__(self, *messages: Message) -> None:
        super().__init__()
        self.messages = list(messages)


class FormatError(Interrupt):
    """The response did not hold exactly one action the protocol can run."""


class Submitted(Interrupt):
    """The agent ran the submit sentinel: its work is done."""


def tools_for(protocol: str) -> list[dict[str, Any]]:
    """The tools offered in the protocol's requests (none for text actions)."""
    if protocol == "mini-swe-agent-text":
        return []
    if protocol == "mini-swe-agent-tools":
        return [tool for tool in TOOLS if tool["function"]["name"] == "bash"]
    return TOOLS


def commands(message: Message, protocol: str) -> list[tuple[str | None, str]]:
    """The (tool call id, command) pairs of a response; raises `FormatError` when it holds
    none (or, in text mode, more than one)."""
    if protocol == "mini-swe-agent-text":
        found = BLOCK.findall(str(message.get("content") or ""))
        if len(found) != 1:
            raise FormatError({"role": "user",
                               "content": FORMAT_ERROR.format(count=len(found))})
        return [(None, found[0].strip())]
    pairs = [(call.get("id", ""), _command(call)) for call in message.get("tool_calls") or []]
    if not pairs:
        raise FormatError({"role": "user", "content": NO_BASH_CALL})
    return pairs


def _command(call: dict[str, Any]) -> str:
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


def opening(messages: list[Message]) -> list[Message]:
    """A history's messages before its agent's first response: what told that agent how to act
    (for mini-swe-agent, its system message and the task with the submit sentinel)."""
    first = next((index for index, message in enumerate(messages)
                  if message.get("role") == "assistant"), len(messages))
    return [dict(message) for message in messages[:first]]


def spoken(messages: list[Message], protocol: str) -> list[Message]:
    """Messages as the protocol's agent wrote and read them. For text actions, each `bash`
    call goes back into its response as a block (the fence the history's prompt names) and
    each tool message becomes the user message it was; other protocols keep them."""
    if protocol != "mini-swe-agent-text":
        return [dict(message) for message in messages]
    fence = "mswea_bash_command" if any(
        "mswea_bash_command" in str(m.get("content") or "") for m in messages[:2]) else "bash"
    result: list[Message] = []
    for message in messages:
        calls = message.get("tool_calls") or []
        if message.get("role") == "assistant" and calls:
            blocks = "\n\n".join(f"```{fence}\n{_command(call)}\n```" for call in calls)
            text = str(message.get("content") or "").strip()
            result.append({"role": "assistant",
                           "content": f"{text}\n\n{blocks}" if text else blocks})
        elif message.get("role") == "tool":
            result.append({"role": "user", "content": message.get("content")})
        else:
            result.append(dict(message))
    return result
