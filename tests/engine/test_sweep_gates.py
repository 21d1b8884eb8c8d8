"""Workers share one gate per provider endpoint: at most N model calls in flight on it; the
meter behind the gate counts the calls made and their seconds, not the wait for the gate, and a
reply from the call cache counts nothing."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.models.types import ChatRequest
from replay.records.spend import Spend
from replay.sweep.workers import Gates, Metered

from conftest import make_client


def calls_at_once(limit: int, tmp_path: Path) -> tuple[float, Spend, Spend]:
    """Four threads each ask a different question of a model that answers after 0.4 s."""
    spent = Spend()
    again = Spend()
    slow = Script([{"fault": "slow", "seconds": 0.4, "content": "answer"}], model="m")
    with ScriptedServer(slow) as server, CallCache(tmp_path / f"{limit}.db") as cache, \
            make_client(server.spec("m"), cache) as client:
        gates = Gates(limit)

        def ask(question: int, meter: Spend) -> None:
            request = ChatRequest(messages=[{"role": "user", "content": f"question {question}"}])
            Metered(client, gates(client.spec), meter, None).complete(request)

        started = time.monotonic()
        threads = [threading.Thread(target=ask, args=(q, spent)) for q in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.monotonic() - started
        for question in range(4):
            ask(question, again)  # answered from the cache: nothing new is spent
    return seconds, spent, again


def test_a_provider_gate_bounds_the_calls_in_flight(tmp_path: Path) -> None:
    one_at_a_time, spent, again = calls_at_once(1, tmp_path)
    all_at_once, _, _ = calls_at_once(4, tmp_path)
    assert one_at_a_time >= 4 * 0.4
    assert all_at_once < 2 * 0.4
    assert spent.input_tokens > 0 and spent.output_tokens > 0 and again == Spend()
    # four calls of 0.4 s each: the waits for the gate (0.4 + 0.8 + 1.2 s) are not call time
    assert spent.calls == 4 and 4 * 0.4 <= spent.call_seconds < 4 * 0.4 + 1.2
