"""`replay models --check MODEL` as a user runs it: against a scripted server on 127.0.0.1 that
answers each check, and against a port where nothing listens (one error line, exit 2)."""

from __future__ import annotations

import socket

from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from conftest import run_replay

TOOL_CALL = {"tool_calls": [{"function": {"name": "bash", "arguments": {"command": "ls"}}}]}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_each_check_says_what_the_endpoint_did() -> None:
    turns = [TOOL_CALL, {"content": "Listed the files; the area test fails."},
             {"content": "Rivers run."}, {"content": "Rivers bend."}]
    with ScriptedServer(Script(turns, model="agent")) as server:
        done = run_replay("models", "--check", f"openai:agent@{server.base_url}")
        asked = [request.body for request in server.requests]
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].split()[:3] == ["tool", "call", "ok"] and "bash" in lines[1]
    assert lines[2].split()[:2] == ["summary", "ok"]
    assert lines[3].split()[:2] == ["seeds", "ok"]
    assert lines[4].split()[:2] == ["context", "FAIL"] and "no context window" in lines[4]
    assert asked[0]["tools"] and asked[1]["tool_choice"] == "none"
    assert [body["temperature"] for body in asked[2:]] == [1.0, 1.0]


def test_an_endpoint_where_nothing_listens_is_one_error_line_and_exit_2() -> None:
    port = _closed_port()
    done = run_replay("models", "--check", f"openai:agent@http://127.0.0.1:{port}/v1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "cannot connect" in last and str(port) in last
