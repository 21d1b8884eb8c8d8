"""The call cache: a repeat is free, seed indexes are samples, rows are safe and self-healing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from replay.core.errors import InputError
from replay.models.cache import CallCache, cache_key
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.models.types import ChatRequest

from conftest import BASH_TOOL, FAKE_KEY, KEY_ENV, history, make_client

REQUEST = ChatRequest(messages=history(), tools=[BASH_TOOL], temperature=0.0)
SCRIPT = Script([{"content": "first"}, {"content": "second"}, {"content": "third"}])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs" / "replay.db"


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)


def test_the_same_request_twice_makes_one_http_request(db: Path) -> None:
    with ScriptedServer(SCRIPT) as server, CallCache(db) as cache:
        with make_client(server.spec(key_env=KEY_ENV), cache) as client:
            first = client.complete(REQUEST)
            again = client.complete(REQUEST)
        assert server.count == 1
    assert again.message == first.message and again.from_cache and not first.from_cache
    assert again.cost == first.cost
    assert (client.stats.calls, client.stats.cache_hits) == (1, 1)


def test_a_new_seed_index_is_a_new_sample(db: Path) -> None:
    with ScriptedServer(SCRIPT) as server, CallCache(db) as cache, \
            make_client(server.spec(), cache) as client:
        contents = [client.complete(REQUEST, seed_index=i).message["content"]
                    for i in (0, 1, 0, 2, 1)]
        assert server.count == 3
    assert contents == ["first", "second", "first", "third", "second"]


def test_every_request_field_is_in_the_key(db: Path) -> None:
    variants = [REQUEST.model_copy(update=change) for change in (
        {"temperature": 0.5}, {"max_tokens": 100}, {"seed": 1}, {"tools": []},
        {"messages": history()[:2]})]
    with ScriptedServer(Script([{"content": "x"}])) as server, CallCache(db) as cache, \
            make_client(server.spec(), cache) as client:
        for request in [REQUEST, *variants]:
            client.complete(request)
        assert server.count == 1 + len(variants)


def test_key_is_canonical() -> None:
    assert cache_key({"a": 1, "b": [1, {"c": "é"}]}) == cache_key({"b": [1, {"c": "é"}], "a": 1})


def test_a_cached_rerun_needs_no_key(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer(SCRIPT) as server, CallCache(db) as cache:
        spec = server.spec(key_env=KEY_ENV)
        with make_client(spec, cache) as client:
            client.complete(REQUEST)
        monkeypatch.delenv(KEY_ENV)
        with make_client(spec, cache) as client:
            assert client.complete(REQUEST).from_cache
        assert server.count == 1


def test_the_call_is_stored_with_usage_and_without_the_key(db: Path) -> None:
    with ScriptedServer(SCRIPT) as server, CallCache(db) as cache:
        spec = server.spec(key_env=KEY_ENV, price_in=1.0, price_out=2.0)
        with make_client(spec, cache) as client:
            response = client.complete(REQUEST, seed_index=2)
        assert server.requests[0].authorization == f"Bearer {FAKE_KEY}"
        row = sqlite3.connect(db).execute(
            "SELECT alias, model, seed_index, request_json, input_tokens, output_tokens, cost"
            " FROM model_calls").fetchone()
    alias, model, seed_index, request_json, input_tokens, output_tokens, cost = row
    assert (alias, model, seed_index) == (spec.alias, "scripted", 2)
    assert json.loads(request_json)["messages"] == history()
    assert (input_tokens, output_tokens) == (response.usage.input_tokens,
                                             response.usage.output_tokens)
    assert cost == pytest.approx(response.cost) and cost > 0
    for path in db.parent.iterdir():
        assert FAKE_KEY.encode() not in path.read_bytes(), path
        assert b"Bearer" not in path.read_bytes(), path


def test_a_corrupt_row_is_a_miss_and_is_overwritten(db: Path) -> None:
    with ScriptedServer(SCRIPT) as server, CallCache(db) as cache, \
            make_client(server.spec(), cache) as client:
        client.complete(REQUEST)
        with sqlite3.connect(db) as other:
            other.execute("UPDATE model_calls SET response_json = '{\"message\": tru'")
        assert client.complete(REQUEST).message["content"] == "second"
        assert client.complete(REQUEST).from_cache
        assert server.count == 2


def test_a_file_that_is_not_sqlite_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are notes, not a database\n" * 10)
    with pytest.raises(InputError, match="notes.db"):
        CallCache(path)


def test_each_call_keeps_its_latency_and_an_older_store_gains_the_columns(db: Path) -> None:
    db.parent.mkdir(parents=True)
    old = sqlite3.connect(db)
    old.execute("CREATE TABLE model_calls (key TEXT PRIMARY KEY, alias TEXT NOT NULL, provider "
                "TEXT NOT NULL, model TEXT NOT NULL, seed_index INTEGER NOT NULL, request_json "
                "TEXT NOT NULL, response_json TEXT NOT NULL, input_tokens INTEGER NOT NULL, "
                "output_tokens INTEGER NOT NULL, cached_tokens INTEGER NOT NULL, cost REAL NOT "
                "NULL, created_at TEXT NOT NULL)")
    old.execute("INSERT INTO model_calls VALUES ('old', 'a', 'openai', 'm', 0, '{}', '{}', 1, 1, "
                "0, 0.0, '2026-01-01T00:00:00+00:00')")
    old.commit()
    old.close()
    with ScriptedServer(SCRIPT) as server, CallCache(db) as cache, \
            make_client(server.spec(key_env=KEY_ENV), cache) as client:
        response = client.complete(REQUEST)
        again = client.complete(REQUEST)
    assert response.latency is not None and response.latency > 0
    assert again.from_cache and again.latency == response.latency
    rows = dict(sqlite3.connect(db).execute("SELECT key, seconds FROM model_calls"))
    assert rows.pop("old") is None
    assert list(rows.values()) == [pytest.approx(response.latency)]
    writes = dict(sqlite3.connect(db).execute("SELECT key, cache_write_tokens FROM model_calls"))
    assert writes.pop("old") == 0  # no prompt cache writes were reported before the column
