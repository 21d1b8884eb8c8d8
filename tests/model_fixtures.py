"""Helpers shared by the models tests: a fake key, fast retries, a tool and a small history."""

from __future__ import annotations

import json

from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.retry import Backoff
from replay.models.types import ModelSpec

KEY_ENV = "REPLAY_TEST_MODEL_KEY"
FAKE_KEY = "sk-replay-fake-7f3a9c0e5b1d"
FAST = Backoff(initial=0.01, cap=0.05)

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command in the repository.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}


def bash_call(call_id: str, command: str) -> dict:
    """An OpenAI-format tool call of the bash tool."""
    return {"id": call_id, "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


def history() -> list[dict]:
    """System prompt, task, two parallel tool calls (a Kimi-style id among them), results."""
    return [
        {"role": "system", "content": "You are a careful engineer."},
        {"role": "user", "content": "Fix square() in shapes/area.py."},
        {"role": "assistant", "content": "Looking first.",
         "tool_calls": [bash_call("functions.bash:0", "cat shapes/area.py"),
                        bash_call("call_2", "ls")]},
        {"role": "tool", "tool_call_id": "functions.bash:0", "content": "def square(side): ..."},
        {"role": "tool", "tool_call_id": "call_2", "content": "shapes tests"},
        {"role": "user", "content": "Continue."},
    ]


def make_client(spec: ModelSpec, cache: CallCache, max_attempts: int = 3,
                timeout: float = 5.0) -> ModelClient:
    """A client with fast backoff for tests."""
    return ModelClient(spec, cache, max_attempts=max_attempts, backoff=FAST, timeout=timeout)
