"""Sessions a user brings, written here in each format: how they are read, the completeness
filter, the scores by boundary position, and a broken file on the command line."""

from __future__ import annotations

import json
from pathlib import Path

from replay.measures.chains import score_session, score_sessions
from replay.measures.retention import Limits
from replay.measures.session_files import load_sessions
from replay.measures.sessions import Compaction, Request, Session, completeness, kept

from conftest import run_replay


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


class ClaudeSession:
    """Records of a Claude Code transcript, chained by uuid as Claude Code writes them."""

    def __init__(self) -> None:
        self.records: list[dict] = []
        self.last: str | None = None
        self.count = 0

    def _add(self, record: dict) -> None:
        self.count += 1
        uuid = f"u{self.count}"
        self.records.append({"parentUuid": self.last, "uuid": uuid, "sessionId": "s1",
                             "isSidechain": False, **record})
        self.last = uuid

    def user(self, text: str) -> None:
        self._add({"type": "user", "message": {"role": "user", "content": text}})

    def assistant(self, text: str, tool: tuple[str, dict] | None = None,
                  tokens: tuple[int, int] = (1000, 0)) -> None:
        """One response: a text record and, with `tool`, a tool_use record of the same id."""
        usage = {"input_tokens": 10, "cache_creation_input_tokens": tokens[0] - tokens[1] - 10,
                 "cache_read_input_tokens": tokens[1], "output_tokens": 20}
        message_id = f"msg_{self.count}"
        self._add({"type": "assistant", "message": {
            "id": message_id, "role": "assistant", "usage": usage,
            "content": [{"type": "thinking", "thinking": "secret thoughts"},
                        {"type": "text", "text": text}]}})
        if tool:
            self._add({"type": "assistant", "message": {
                "id": message_id, "role": "assistant", "usage": usage,
                "content": [{"type": "tool_use", "id": f"toolu_{self.count}", "name": tool[0],
                             "input": tool[1]}]}})
            self._add({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{self.count - 1}",
                 "content": [{"type": "text", "text": tool[1].get("output", "ok")}]}]}})

    def compact(self, summary: str) -> None:
        self.count += 1
        self.records.append({"type": "system", "subtype": "compact_boundary", "parentUuid": None,
                             "logicalParentUuid": self.last, "uuid": f"u{self.count}",
                             "compactMetadata": {"trigger": "auto", "preTokens": 150000}})
        self.last = f"u{self.count}"
        self._add({"type": "user", "isCompactSummary": True, "message": {
            "role": "user", "content": "This session is being continued from a previous "
                                       f"conversation that ran out of context.\n{summary}"}})


def claude_two_compactions() -> ClaudeSession:
    """A repair with two auto compactions; the second summary calls a written file pending."""
    chat = ClaudeSession()
    chat.records.append({"type": "summary", "summary": "Fix parser", "leafUuid": "u9"})
    chat.user("Fix the KeyError in src/parser.py when a section has no options")
    chat.assistant("Reading it.", ("Read", {"file_path": "/repo/src/parser.py",
                                            "output": "def parse_section(lines):\n  KeyError"}),
                   (3000, 0))
    chat.assistant("Running the tests.", ("Bash", {"command": "python -m pytest tests -q",
                                                   "output": "KeyError: 'options'\n3 failed"}),
                   (4000, 2990))
    chat.compact("Summary: fixing KeyError: 'options' in src/parser.py (parse_section).")
    chat.assistant("Editing.", ("Write", {"file_path": "/repo/src/parser.py",
                                          "content": "def parse_section(lines): ...",
                                          "output": "written"}), (2000, 0))
    chat.assistant("Tests again.", ("Bash", {"command": "python -m pytest tests -q",
                                             "output": "3 passed in 0.41s"}), (2600, 1990))
    chat.assistant("parse_section fixed; 3 passed.", None, (2900, 2590))
    chat.compact("Summary: parse_section handles sections without options.\n"
                 "Pending Tasks:\n - rewrite parser.py docstrings")
    chat.user("Thanks. Now also check src/lexer.py")
    chat.assistant("Looking at lexer.", ("Read", {"file_path": "/repo/src/lexer.py",
                                                  "output": "def tokenize(text):"}), (1500, 0))
    return chat


def test_a_claude_code_transcript_becomes_a_session(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "claude.jsonl", claude_two_compactions().records)
    [session] = load_sessions([path])
    assert session.format == "claude-code"
    assert [c.trigger for c in session.compactions] == ["auto", "auto"]
    assert session.compactions[0].summary.startswith("This session is being continued")
    roles = [m["role"] for m in session.messages]
    assert roles[:4] == ["user", "assistant", "tool", "assistant"]
    assert session.messages[1]["content"] == "Reading it."  # thinking left out
    assert json.loads(session.messages[1]["tool_calls"][0]["function"]["arguments"])[
        "file_path"] == "/repo/src/parser.py"
    assert [r.input_tokens for r in session.requests] == [3000, 4000, 2000, 2600, 2900, 1500]
    assert [r.cached_tokens for r in session.requests] == [0, 2990, 0, 1990, 2590, 0]
    assert all(r.prefix_ok for r in session.requests)
    # pairs: (1,2) (3,4) (4,5) judged; the two crossing a boundary are left out
    assert completeness(session) == (1.0, 3)


def test_scores_by_position_and_the_disorder_check(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "claude.jsonl", claude_two_compactions().records)
    scored = score_session(load_sessions([path])[0], Limits())
    first, second = scored.compactions
    assert first.recurring is not None and second.recurring is not None
    assert "/repo/src/parser.py" in first.recurring.reference["path"]
    assert "KeyError: 'options'" not in first.recurring.reference["error_message"]  # no recurrence
    assert first.recurring.kept["identifier"] == ["parse_section"]
    assert first.disorder == [] and second.disorder == ["parser.py"]
    assert second.future is not None and "/repo/src/lexer.py" in second.future.reference["path"]
    assert second.future.share == 0.0


def test_the_completeness_filter() -> None:
    session = Session("s", "messages", [{"role": "user", "content": "x"}] * 20,
                      [Compaction(10, "summary")])
    session.requests = [Request(2, 1000, 0), Request(4, 1200, 990), Request(6, 1300, 1190),
                        Request(8, 400, 0),  # a large drop: the pair is left out
                        Request(9, 500, 390), Request(11, 600, 0),  # crosses the boundary
                        Request(13, 700, 590), Request(15, 800, 100),  # cache shrank: broken
                        Request(17, 900, 0, prefix_ok=False), Request(19, 1000, 0)]
    # judged: 1-2, 2-3, 4-5, 6-7, 9-10 complete; 7-8 (cache) and 8-9 (prefix) broken
    assert completeness(session) == (0.714, 7)
    assert not kept(session)
    session.requests[7].cached_tokens = 0  # no cache hit says nothing
    session.requests[8].prefix_ok = True
    assert completeness(session) == (1.0, 7) and kept(session)
    assert completeness(Session("s", "messages")) == (None, 0)


def test_a_branch_breaks_the_prefix_of_a_claude_code_session(tmp_path: Path) -> None:
    chat = ClaudeSession()
    chat.user("Start in app/main.py")
    chat.assistant("One.", ("Bash", {"command": "ls", "output": "app"}), (2000, 0))
    branch_point = chat.last
    chat.assistant("Two.", ("Bash", {"command": "pwd", "output": "/w"}), (2200, 1990))
    chat.last = branch_point  # the user rewound: the next record hangs off an earlier one
    chat.user("Instead, try a different approach")
    chat.assistant("Three.", None, (2300, 1000))
    [session] = load_sessions([write_jsonl(tmp_path / "branch.jsonl", chat.records)])
    assert [r.prefix_ok for r in session.requests] == [True, True, False]
    assert completeness(session) == (0.5, 2)


def codex_rollout(rolled_back: bool = False) -> list[dict]:
    """A Codex rollout: shell calls, an apply_patch, two local compactions and a remote one,
    token counts; with `rolled_back`, the user rolls the thread back once."""
    def item(payload: dict) -> dict:
        return {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": payload}

    def tokens(total: int, cached: int) -> dict:
        return {"timestamp": "t", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": total, "cached_input_tokens": cached}}}}

    prefix = "Another language model started to solve this problem and produced a summary."
    return [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "r1", "cwd": "/w"}},
        item({"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "<permissions>sandbox</permissions>"}]}),
        item({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Make load_config read ~/.apprc"}]}),
        item({"type": "function_call", "name": "shell", "call_id": "c1", "arguments": json.dumps(
            {"command": ["bash", "-lc", "rg -n load_config src"]})}),
        tokens(5000, 0),
        item({"type": "function_call_output", "call_id": "c1", "output": json.dumps(
            {"output": "src/config.py:12:def load_config(path):", "metadata": {"exit_code": 0}})}),
        item({"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
              "input": "*** Begin Patch\n*** Update File: src/config.py\n@@\n*** End Patch"}),
        tokens(5600, 4990),
        item({"type": "custom_tool_call_output", "call_id": "c2", "output": "Success"}),
        {"timestamp": "t", "type": "compacted", "payload": {
            "message": "load_config in src/config.py now reads ~/.apprc; next: update config.py "
                       "tests", "replacement_history": []}},
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "context_compacted"}},
        item({"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Running pytest on tests/test_config.py"}]}),
        item({"type": "function_call", "name": "shell", "call_id": "c3", "arguments": json.dumps(
            {"command": ["bash", "-lc", "pytest tests/test_config.py -q"]})}),
        tokens(3000, 0),
        item({"type": "function_call_output", "call_id": "c3", "output": "2 passed in 0.12s"}),
        *([{"timestamp": "t", "type": "event_msg", "payload": {"type": "thread_rolled_back"}}]
          if rolled_back else []),
        item({"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Done with load_config."}]}),
        tokens(3300, 2990),
        {"timestamp": "t", "type": "compacted", "payload": {"message": "", "replacement_history": [
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Make load_config read ~/.apprc"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": f"{prefix}\nload_config done, 2 passed"}]}]}},
        item({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Also document ~/.apprc in README.md"}]}),
        {"timestamp": "t", "type": "compacted", "payload": {"message": "", "replacement_history": [
            {"type": "compaction", "encrypted_content": "opaque"}]}},
    ]


def test_a_codex_rollout_becomes_a_session(tmp_path: Path) -> None:
    [session] = load_sessions([write_jsonl(tmp_path / "rollout-1.jsonl", codex_rollout())])
    assert session.format == "codex"
    assert [m["role"] for m in session.messages] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant",
        "user"]
    assert session.messages[2]["content"] == "src/config.py:12:def load_config(path):"
    summaries = [c.summary for c in session.compactions]
    assert summaries[0].startswith("load_config in src/config.py")
    assert summaries[1].endswith("load_config done, 2 passed") and summaries[2] == ""
    assert [(r.end, r.input_tokens, r.cached_tokens, r.prefix_ok) for r in session.requests] == [
        (1, 5000, 0, True), (3, 5600, 4990, True), (5, 3000, 0, True), (7, 3300, 2990, True)]
    assert completeness(session) == (1.0, 2)
    scored = score_session(session, Limits())
    # patched, then called pending, but no passing test or commit came after the patch: the file
    # was still being worked on, which is no disorder
    assert scored.compactions[0].disorder == []
    assert scored.compactions[2].recurring is None  # a remote compaction keeps no text
    report = score_sessions([session], Limits())
    assert [(m.position, m.n, m.empty) for m in report.future] == [(1, 1, 0), (2, 1, 0),
                                                                   (3, 0, 1)]
    [rolled] = load_sessions([write_jsonl(tmp_path / "rollout-2.jsonl", codex_rollout(True))])
    assert [r.prefix_ok for r in rolled.requests] == [True, True, True, False]
    assert completeness(rolled) == (0.5, 2) and not kept(rolled)


def test_a_jsonl_of_messages_with_boundary_markers(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "plain.jsonl", [
        {"role": "user", "content": "fix util.py"},
        {"role": "assistant", "content": "reading util.py", "usage": {
            "input_tokens": 100, "cached_tokens": 0}},
        {"type": "compaction", "summary": "working on util.py"},
        {"role": "assistant", "content": "util.py fixed", "usage": {"input_tokens": 50}}])
    [session] = load_sessions([path])
    assert session.format == "messages" and len(session.messages) == 3
    assert session.compactions == [Compaction(2, "working on util.py")]
    assert [r.end for r in session.requests] == [1, 2]
    assert completeness(session) == (None, 0) and kept(session)


def test_a_broken_line_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", claude_two_compactions().records)
    broken = tmp_path / "broken.jsonl"
    lines = [json.dumps(r) for r in claude_two_compactions().records]
    lines[3] = lines[3][:40]
    broken.write_text("\n".join(lines) + "\n")
    store = tmp_path / "runs" / "replay.db"
    done = run_replay("retention", "--sessions", str(good), str(broken), "--store", str(store))
    assert done.returncode == 2
    assert f"{broken}:4: not valid JSON" in done.stderr
    assert done.stdout == "" and not store.parent.exists()


def test_the_command_prints_positions_and_the_disorder_rate(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    write_jsonl(folder / "claude.jsonl", claude_two_compactions().records)
    write_jsonl(folder / "rollout-1.jsonl", codex_rollout())
    done = run_replay("retention", "--sessions", str(folder))
    assert done.returncode == 0, done.stderr
    assert "retention by boundary position" in done.stdout
    assert ("disorder (experimental: precision unmeasured on the validation set, 0 flag(s)): "
            "1/3 (33.3%, 6.1-79.2%)") in done.stdout
    as_json = run_replay("retention", "--sessions", str(folder), "--json")
    data = json.loads(as_json.stdout)
    assert [(p["position"], p["n"], p["empty"]) for p in data["production"]] == [
        (1, 2, 0), (2, 2, 0), (3, 0, 1)]
    assert data["disorder"] == {"flagged": 1, "checked": 3, "experimental": True,
                                "validation_precision": None, "validation_flags": 0}


def test_bad_retention_arguments_are_one_line_and_exit_2(tmp_path: Path) -> None:
    store = tmp_path / "runs" / "replay.db"
    for args, message in (
            (["--store", str(store)], f"no store at {store}"),
            (["--sessions"], "--sessions needs at least one session file or folder"),
            (["--sessions", str(tmp_path / "missing.jsonl")], "no such file or folder"),
            (["--sessions", str(tmp_path), "--format", "cursor"], "unknown session format"),
            (["one", "two", "--store", str(store)], "give one run name")):
        done = run_replay("retention", *args)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not store.parent.exists()
