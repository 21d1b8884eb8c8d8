"""Carriers: how a summary re-enters the agent's context for POST.

- `summary-only` (the study's POST): the agent's system prompt and one user message holding the
  issue and the summary; nothing of the history is kept.
- `native`: the wrapper and kept tail of the agent whose prompt wrote the summary (REFERENCE.md):
  Claude Code keeps no raw message; Codex keeps recent user messages (20k tokens); Gemini CLI adds
  a model acknowledgement and the last ~30% of the history; opencode asks "What did we do so
  far?" and keeps recent turns; Kimi Code keeps the last two user/assistant messages; Hermes
  puts its SUMMARY_PREFIX before the body and its end marker after it, after the task.
Tokens here are characters / 4. A kept tail never starts inside a tool call and its results.

A POST speaks the protocol of its history (`History.protocol`, as PRE does), so it keeps what
taught the history's agent that protocol. For replay's `tool-calls` that is replay's own system
prompt (`prompts/agent/`), as above. For mini-swe-agent's protocols it is the history's own
opening, the messages before its first response, verbatim: the system message that asks for
exactly one bash block, and the task message with the issue and the submit sentinel
(`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`). Every carrier starts from that opening where a
tool-calls POST starts from replay's system prompt; `summary-only` adds one user message that
hands over the summary (`prompts/agent/compacted.md`: the words replay's own resume message
ends with), and keeps nothing else of the history.
"""

from __future__ import annotations

from replay.agent.loop import compacted, resume_messages, task_messages
from replay.agent.protocols import opening
from replay.compaction import hermes
from replay.compaction.sources import PromptText
from replay.core.errors import InputError
from replay.models.types import Message
from replay.records.summary import Summary

CARRIERS = ("summary-only", "native")
CLAUDE_CODE_WRAPPER = ("This session is being continued from a previous conversation that ran "
                       "out of context. The conversation is summarized below:\n")
KIMI_WRAPPER = ("<system>Previous context has been compacted. Here is the compaction "
                "output:</system>")
GEMINI_ACK = "Got it. Thanks for the additional context!"
CODEX_USER_BUDGET = 20_000
OPENCODE_BUDGET = 15_000


def tokens(message: Message) -> int:
    """A rough token count of a message: characters / 4."""
    size = len(str(message.get("content") or ""))
    size += sum(len(str(call.get("function", {}))) for call in message.get("tool_calls") or [])
    return size // 4


def kept_tail(history: list[Message], budget: int) -> list[Message]:
    """The longest run of last messages within `budget` tokens that starts at a clean turn."""
    body = [m for m in history if m.get("role") != "system"]
    start, used = len(body), 0
    while start > 0 and used + tokens(body[start - 1]) <= budget:
        start -= 1
        used += tokens(body[start])
    while start < len(body) and body[start].get("role") == "tool":
        start += 1
    return body[start:]


def recent_users(history: list[Message], budget: int) -> list[Message]:
    """The most recent user messages within `budget` tokens, in their order."""
    kept: list[Message] = []
    used = 0
    for message in reversed([m for m in history if m.get("role") == "user"]):
        used += tokens(message)
        if used > budget:
            break
        kept.insert(0, message)
    return kept


def post_messages(summary: Summary, history: list[Message], problem_statement: str,
                  workdir: str, carrier: str = "summary-only",
                  prompt: PromptText | None = None, protocol: str = "tool-calls") -> list[Message]:
    """The messages a POST continuation starts from (`prompt`: the one that wrote the summary;
    `protocol`: the history's, whose instructions are kept, see the module docstring)."""
    if carrier not in CARRIERS:
        raise InputError(f"unknown carrier {carrier!r}: use {' or '.join(CARRIERS)}")
    if summary.messages is not None:
        return summary.messages
    if protocol == "tool-calls":
        if carrier == "summary-only" or prompt is None:
            return resume_messages(problem_statement, summary.text, workdir)
        return native_messages(summary, history, task_messages(problem_statement, workdir)[:1],
                               prompt)
    instructions = opening(history)
    if not instructions:
        raise InputError(f"a {protocol} history needs the messages that opened it (its system "
                         "prompt and task) before its first response")
    if carrier == "summary-only" or prompt is None:
        return [*instructions, {"role": "user", "content": compacted(summary.text)}]
    return native_messages(summary, history, instructions, prompt)


def native_messages(summary: Summary, history: list[Message], system: list[Message],
                    prompt: PromptText) -> list[Message]:
    """The `native` carrier of `prompt`'s agent, opening with `system` (the instructions the
    continuation keeps); a message of `system` is not repeated in what the carrier keeps."""
    prompt_name = prompt.name
    if prompt_name == "claude-code":
        kept: list[Message] = [{"role": "user", "content": CLAUDE_CODE_WRAPPER + summary.text}]
    elif prompt_name == "codex":
        prefix = prompt.parts.get("summary-prefix")
        if not prefix:
            raise InputError("the codex prompt has no summary prefix: run `replay prompts sync "
                             "codex --force`")
        kept = [*recent_users(history, CODEX_USER_BUDGET),
                {"role": "user", "content": f"{prefix}\n{summary.text}"}]
    elif prompt_name == "gemini-cli":
        budget = int(0.3 * sum(tokens(m) for m in history))
        kept = [{"role": "user", "content": summary.text},
                {"role": "assistant", "content": GEMINI_ACK}, *kept_tail(history, budget)]
    elif prompt_name == "opencode":
        budget = min(OPENCODE_BUDGET, max(2_000, sum(tokens(m) for m in history) // 4))
        kept = [{"role": "user", "content": "What did we do so far?"},
                {"role": "assistant", "content": summary.text}, *kept_tail(history, budget)]
    elif prompt_name == "hermes":
        kept = [{"role": "user", "content": hermes.native_text(prompt, summary.text)}]
    elif prompt_name == "kimi-code":
        last_two = [m for m in history if m.get("role") in ("user", "assistant")
                    and not m.get("tool_calls")][-2:]
        kept = [*last_two, {"role": "user", "content": f"{KIMI_WRAPPER}\n{summary.text}"}]
    else:
        raise InputError(f"no native carrier for prompt {prompt_name!r}")
    return [*system, *(message for message in kept if message not in system)]
