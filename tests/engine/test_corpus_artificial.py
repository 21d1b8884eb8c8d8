"""Summaries a model writes at artificial boundaries of a corpus's real sessions, scored like the
production summaries: a scripted model on 127.0.0.1 writes them; the session is the real Claude
Code transcript under tests/fixtures/sessions."""

from __future__ import annotations

import gzip
from pathlib import Path

from test_summarize import prompt

from replay.compaction.summarize import parse_summarizer
from replay.corpus.artificial import draw, score_one, tail_messages
from replay.corpus.manifest import CorpusEntry
from replay.corpus.scoring import Job
from replay.measures.retention import Limits
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from conftest import make_client, one_line_exit_2, replay_here
from paths import FIXTURES

FIXTURE = FIXTURES / "sessions" / \
    "claude-code-entire-cli-3-compactions.jsonl.gz"


def _job(tmp_path: Path, name: str = "s.jsonl") -> Job:
    path = tmp_path / name
    path.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    entry = CorpusEntry(name, "entireio/cli", "0" * 40, "cd/95adddad32/0", 1, name,
                        "Claude Code", "MIT", 3, path.stat().st_size, True)
    return Job(entry, path, tmp_path / "record.json")


def test_the_model_summarizes_the_span_the_production_compactor_did(tmp_path: Path) -> None:
    job = _job(tmp_path)
    echo = Script([{"content": "<summary>Nothing kept.</summary>"}], model="summ")
    with ScriptedServer(echo) as server, CallCache(tmp_path / "c.db") as cache, \
            make_client(server.spec("summ"), cache) as client:
        found = score_one(job, parse_summarizer("summ:claude-code"),
                          prompt("claude-code", user="SUMMARIZE"), client, Limits(), 6000)
        sent = server.requests[0].body["messages"]
    assert found is not None and found.real
    assert found.production == 0.0 and 0 < found.summary_chars < 100
    assert found.real_production is not None and found.real_production > 0
    assert sum(len(str(m.get("content") or "")) for m in sent) < 6000 + 8000  # tail + prompt


def test_a_summary_naming_the_later_details_scores_higher(tmp_path: Path) -> None:
    job = _job(tmp_path)
    names = parse_summarizer("summ:claude-code"), prompt("claude-code", user="SUMMARIZE")
    with ScriptedServer(Script([{"content": "x"}], model="summ")) as server, \
            CallCache(tmp_path / "c.db") as cache, \
            make_client(server.spec("summ"), cache) as client:
        first = score_one(job, *names, client, Limits(), 6000)
    assert first is not None
    session_text = job.path.read_text()
    assert "cmd/entire/cli" in session_text
    with ScriptedServer(Script([{"content": session_text[-200_000:]}], model="summ")) as server, \
            CallCache(tmp_path / "d.db") as cache, \
            make_client(server.spec("summ"), cache) as client:
        second = score_one(job, *names, client, Limits(), 6000)
    assert second is not None and second.production is not None
    assert second.production > (first.production or 0)


def test_the_draw_is_seeded_and_the_tail_starts_at_a_call() -> None:
    jobs = [Job(CorpusEntry(f"{n}.jsonl", "r", "c", "p", 1, str(n), "a", "MIT", 0, 1, True),
                Path(f"{n}.jsonl"), Path("x")) for n in range(20)]
    assert draw(jobs, 5) == draw(list(reversed(jobs)), 5) and len(draw(jobs, 5)) == 5
    messages = [{"role": "user", "content": "a" * 100},
                {"role": "assistant", "content": "", "tool_calls": []},
                {"role": "tool", "content": "b" * 100}, {"role": "assistant", "content": "c"}]
    assert tail_messages(messages, 150)[0]["role"] != "tool"


def test_summarizer_needs_a_prompt_and_a_corpus(tmp_path: Path) -> None:
    one_line_exit_2(replay_here("retention", "--corpus", str(tmp_path), "--summarizer", "smollm2"),
                    "--summarizer needs --prompt")
    one_line_exit_2(replay_here("retention", "--summarizer", "smollm2", "--prompt", "codex"),
                    "--summarizer needs --corpus")
    one_line_exit_2(replay_here("retention", "--plot", str(tmp_path / "p.png")),
                    "--plot needs --corpus")
