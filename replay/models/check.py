"""`replay models --check MODEL`: a few small requests that say, in seconds, what a sweep needs
to know of an endpoint: whether it returns tool calls for the tools it is given (the agent's),
writes a summary as text, honours seeds, and how long a prompt it takes.

The context probe sends a prompt a little longer than the declared window and expects a
refusal; it runs only where it costs nothing (an embedded GGUF model, a server on loopback).
Nothing is kept in the store: each check has its own call cache in a temporary folder.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from replay.core.errors import Halt
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.transport import CONNECTION, ModelRefused, ModelTransientError
from replay.models.types import ChatRequest, ModelSpec

TASK = [{"role": "system", "content": "You fix a bug in the repository at /testbed through "
                                      "tools. Every response calls a tool."},
        {"role": "user", "content": "tests/test_area.py fails. Start by listing the files."}]
HISTORY = [*TASK, {"role": "assistant", "content": "", "tool_calls": [
    {"id": "call_1", "type": "function",
     "function": {"name": "bash", "arguments": '{"command": "ls -R"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "shapes/area.py\ntests/test_area.py"},
    {"role": "user", "content": "Summarize the work so far in three sentences."}]
FREE = [{"role": "user", "content": "Write one sentence about rivers."}]
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@contextmanager
def _client(spec: ModelSpec) -> Iterator[ModelClient]:
    with tempfile.TemporaryDirectory() as folder, \
            CallCache(Path(folder) / "check.db") as cache, \
            ModelClient(spec, cache, max_attempts=2) as client:
        yield client


def check_model(spec: ModelSpec, tools: list[dict[str, Any]], say: Callable[[str], None]) -> bool:
    """Run the checks on `spec` with the tool schemas `tools` (the agent's), one line each; True
    when the tools got a tool call and the summary came back as text. Raises `InputError` for a
    missing key and `Halt` for an endpoint that is not there, as any command."""
    with _client(spec) as client:
        called = _timed(say, "tool call", lambda: _tool_call(client, tools))
        summary = _timed(say, "summary", lambda: _summary(client, tools))
        _timed(say, "seeds", lambda: _seeds(client))
        _timed(say, "context", lambda: _context(client))
    return called and summary


def _timed(say: Callable[[str], None], what: str, check: Callable[[], tuple[bool, str]]) -> bool:
    started = time.monotonic()
    try:
        good, text = check()
    except ModelRefused as exc:
        good, text = False, f"refused: {exc}"
    except ModelTransientError as exc:
        if exc.why == CONNECTION:  # nothing listens there: every further check would fail alike
            raise Halt(str(exc)) from None
        good, text = False, f"failed: {exc}"
    say(f"{what:10} {'ok  ' if good else 'FAIL'} {text} ({time.monotonic() - started:.1f} s)")
    return good


def _tool_call(client: ModelClient, tools: list[dict[str, Any]]) -> tuple[bool, str]:
    reply = client.complete(ChatRequest(messages=TASK, tools=tools, temperature=0))
    calls = reply.message.get("tool_calls") or []
    if not calls:
        return False, (f"no tool call: the reply was text ({reply.finish_reason}); a server may "
                       "need tool_choice=required, or another chat template")
    names = ", ".join(call["function"]["name"] for call in calls)
    return True, f"{names} ({reply.usage.input_tokens:,} prompt tokens with the tools)"


def _summary(client: ModelClient, tools: list[dict[str, Any]]) -> tuple[bool, str]:
    reply = client.complete(ChatRequest(messages=HISTORY, tools=tools, temperature=0,
                                        max_tokens=128, tool_choice="none"))
    text = reply.message.get("content") or ""
    cut = ", cut off at its cap" if reply.finish_reason in ("length", "max_tokens") else ""
    if not text.strip():
        return False, "no text came back for a summary request with the tools in it"
    return True, f"{reply.usage.output_tokens} tokens of text{cut}"


def _seeds(client: ModelClient) -> tuple[bool, str]:
    ask = ChatRequest(messages=FREE, temperature=1.0, max_tokens=24)
    texts = {client.complete(ask, seed_index=index).message.get("content") for index in (1, 2)}
    if len(texts) == 1:
        return False, ("seeds 1 and 2 gave the same reply at temperature 1: confirmation "
                       "samples would not differ")
    return True, "seeds 1 and 2 differ at temperature 1"


def _context(client: ModelClient) -> tuple[bool, str]:
    spec = client.spec
    window = spec.context_window
    host = urlparse(spec.base_url).hostname or ""
    if window is None:
        return False, "no context window declared (set context_window): not probed"
    if spec.provider != "gguf" and host not in LOCAL_HOSTS:
        return True, f"declared {window:,} tokens; not probed (a remote prompt that long costs)"
    words = int(window * 1.2)  # a word is at least one token
    try:
        client.complete(ChatRequest(messages=[{"role": "user", "content": "word " * words}],
                                    max_tokens=1))
    except ModelRefused as exc:
        return exc.context, f"a prompt over {window:,} tokens is refused as too long"
    return False, f"a prompt of {words:,} words was answered: the window is over {window:,}"
