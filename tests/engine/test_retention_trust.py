"""Retention one can trust, on real text: the noise rules, whole-token matching of every type,
the forms of a path, the budget-matched anchor_index, the disorder check's evidence, and the
validation set's command (tests/fixtures/validation, see its README)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from replay.histories.records import load_history_file
from replay.measures.chains import score_sessions
from replay.measures.details import Reading, find_details, serialize
from replay.measures.disorder import (
    VALIDATED_FLAGS,
    VALIDATED_TRUE,
    disorder,
    governed_units,
    governs_an_edit,
    pending_files,
)
from replay.measures.matching import Occurrences, PathForms
from replay.measures.noise import RULES, project_names
from replay.measures.retention import Limits, recurring_reference, score
from replay.measures.runs import reference_of
from replay.measures.session_files import load_sessions
from replay.measures.validation import validate
from replay.store import Store

from conftest import run_replay
from paths import FIXTURES, ROOT

ROOT = ROOT
VALIDATION = FIXTURES / "validation"
F5 = VALIDATION / "claude-code-entire-cli-f5-dab3d95bc1-0.jsonl.gz"
CODEX = VALIDATION / "codex-agentv-79-6eaddfe2f9-0.jsonl.gz"


@pytest.fixture(scope="module")
def session_text() -> str:
    """The serialized messages of one real Claude Code session of the validation set."""
    return serialize(load_sessions([F5])[0].messages)


def line_with(text: str, needle: str) -> str:
    """The first line of `text` holding `needle` (so a test reads real text, not made-up)."""
    return next(line for line in text.splitlines() if needle in line)


@pytest.mark.parametrize(("needle", "value", "rule"), [
    ("feat(explain): change default", "feat", "commit_type"),
    ("$ git log --oneline main..HEAD", "git log --oneline main..HEAD", "routine_command"),
    ("ok  \tentire.io/cli/cmd/entire/cli\t", None, "timing"),
])
def test_each_noise_rule_on_a_line_of_a_real_session(session_text: str, needle: str,
                                                     value: str | None, rule: str) -> None:
    found = find_details(line_with(session_text, needle))
    dropped = [v for v, why in found.noise.items() if why == rule]
    assert dropped and (value is None or value in dropped), found.noise
    assert not any(v in values for v in dropped for values in found.values.values())
    assert rule in RULES and RULES[rule]  # every rule says why


@pytest.mark.parametrize(("text", "value", "rule"), [
    ("Run /compact now, then grep -E 'x'/i and //nolint:errcheck", "/compact", "slash_command"),
    ("the flag /i in /foo/i", "/i", "slash_command"),
    ("func (s *Strategy) Run() error { return len(x) }", "len", "keyword"),
    ('{"old_string": "a", "new_string": "b"} then TodoWrite(todos)', "TodoWrite", "tool_name"),
    ("read /Users/alex/.claude/projects/x/abc.jsonl for the transcript",
     "/Users/alex/.claude/projects/x/abc.jsonl", "boilerplate"),
    ("compare origin/main...HEAD first", "origin/main...HEAD", "git_range"),
    ("$ go test ./... 2>/dev/null | tail -5", "/dev/null", "device_path"),
])
def test_noise_rules_on_the_forms_the_issue_names(text: str, value: str, rule: str) -> None:
    found = find_details(text)
    assert found.noise.get(value) == rule, found.noise


def test_noise_rules_keep_what_they_should(session_text: str) -> None:
    line = line_with(session_text, "RunE")
    assert "RunE" not in find_details(line).noise  # `rune` is a keyword, `RunE` a field
    found = find_details("cd ../../packages/sdk && go run ./cmd/entire")
    assert "../../packages/sdk" in found.values["path"]


def test_the_working_directory_names_no_detail_of_any_kind() -> None:
    session = load_sessions([CODEX])[0]
    assert session.cwd.endswith("/EntityProcess/agentv")
    project = project_names([session.cwd])
    text = serialize(session.messages)
    line = line_with(text, "the AgentV -> Opik")  # an issue body the work read
    assert "AgentV" in find_details(line).values["identifier"]
    assert find_details(line, Reading(project)).noise["AgentV"] == "project_name"
    # `traceFromTraceArtifact`, a name of the work on the same boundary, stays
    assert "traceFromTraceArtifact" in find_details(text, Reading(project)).values[
        "identifier"]
    for compaction in score_sessions([session], Limits()).sessions[0].compactions:
        names = {value.lower() for values in compaction.reference.values() for value in values}
        assert compaction.reference["identifier"] and not names & project


def test_whole_token_matching_for_every_type_on_a_real_summary() -> None:
    summary = load_sessions([F5])[0].compactions[0].summary
    text = Occurrences(summary)
    # a value inside a longer token of the real summary is not kept; the whole token is
    assert "instructions" not in summary or not text.has("identifier", "instruction")
    for kind, inside, whole in [
        ("identifier", "GetLogsOnlyRewind", "GetLogsOnlyRewindPoints"),
        ("path", "rewind.go", "manual_commit_rewind.go"),
        ("command", "entire expl", "entire explain"),
        ("identifier", "IsOnDefault", "IsOnDefaultBranch"),
        ("path", "git_operations.g", "cli/git_operations.go"),
    ]:
        assert whole in summary and not text.has(kind, inside), (kind, inside)
        assert text.has(kind, whole), (kind, whole)
    codex = serialize(load_sessions([CODEX])[0].messages)
    for kind, inside, whole, line in [
        ("hash", "2249d3", "2249d3e", "2249d3e fix: use strong id.CheckpointID type"),
        ("identifier", "CheckpointI", "id.CheckpointID", "2249d3e fix: use strong id.CheckpointID"),
        ("error_type", "TraceErr", "TraceError", "export interface TraceError {"),
        ("version", "1.3.1", "v1.3.13", "Bun v1.3.13 (Linux x64)"),
        ("version", "3.13", "3.13.1", "compound-engineering/3.13.1/skills"),
    ]:
        real = Occurrences(line_with(codex if kind in ("error_type", "version") else
                                     serialize(load_sessions([F5])[0].messages), line))
        assert real.has(kind, whole) and not real.has(kind, inside), (kind, inside)
    prose = Occurrences("I'm glad you're ready; follow these instructions, as requested, print")
    for kind, value in [("identifier", "str"), ("identifier", "request"), ("identifier", "int"),
                        ("version", "1.2"), ("hash", "abc1234"), ("host", "example.com"),
                        ("url", "https://x.io"), ("test_id", "t.py::a"),
                        ("error_type", "Error"), ("error_message", "KeyError: 'x'")]:
        assert not prose.has(kind, value), (kind, value)
    assert Occurrences("v1.2.3 and 11.2.3").has("version", "1.2.3") is False
    assert Occurrences("at https://x.io/a/b").has("url", "https://x.io/a") is False
    assert Occurrences("see builtins.KeyError: 'x'").has("error_type", "KeyError")


def test_path_forms_on_a_real_session() -> None:
    session = load_sessions([F5])[0]
    cwd = session.cwd
    assert cwd.endswith("/ent-109-text-output-checkpoint-flag")
    forms = PathForms.of([cwd], [f"{cwd}/cmd/entire/cli/explain.go", "cmd/entire/cli/x/a.go",
                                 "cmd/entire/cli/y/a.go"])
    reference = {"path": [f"{cwd}/cmd/entire/cli/explain.go", "cmd/entire/cli/strategy/common.go",
                          "cmd/entire/cli/x/a.go", "docs/unseen.md"]}
    summary = ("Edited `cmd/entire/cli/explain.go`; `strategy/common.go` too, and "
               f"{cwd}/cmd/entire/cli/x/a.go. Also x/a.go.")
    found = score(reference, summary, forms)
    assert found.forms == {f"{cwd}/cmd/entire/cli/explain.go": "relative",
                           "cmd/entire/cli/strategy/common.go": "suffix",
                           "cmd/entire/cli/x/a.go": "absolute"}
    assert found.share == 0.75 and found.literal_share == 0.0
    strict = score(reference, summary, PathForms.of([cwd], literal=True))
    assert strict.found == 0
    # the forms of one path are one detail of the reference
    assert forms.canonical(f"{cwd}/cmd/entire/cli/explain.go") == forms.canonical(
        "./cmd/entire/cli/explain.go")


def test_the_command_reports_both_rules_sizes_and_the_budget_matched_index() -> None:
    done = run_replay("retention", "--sessions", str(VALIDATION), "--anchor-index", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    cwds = {str(s.source): s.cwd for s in load_sessions([VALIDATION])}
    compactions = [(cwds[s["source"]], c) for s in data["sessions"] for c in s["compactions"]
                   if c["recurring"]]
    assert len(compactions) == 15
    for cwd, compaction in compactions:
        paths = [p for part in ("kept", "missed") for p in compaction["recurring"][part].get(
            "path", [])]
        spellings = [p.removeprefix("./").rstrip("/").removeprefix(cwd + "/") for p in paths]
        assert len(set(spellings)) == len(paths)  # the forms of one path are one detail
        recurring = compaction["recurring"]
        assert recurring["reference"] == {"source": "session", "size": recurring["size"]}
        assert set(recurring["path_forms"].values()) <= {"literal", "relative", "absolute",
                                                         "suffix"}
        assert recurring["literal_share"] <= recurring["share"]
        methods = {m["name"]: m for m in compaction["baseline"]}
        assert methods["anchor_index"]["chars"] <= compaction["summary_chars"]
        assert methods["anchor_index_full"]["chars"] >= methods["anchor_index"]["chars"]
        assert methods["anchor_index"]["recurring_per_1k_chars"] is not None
        found = [v for part in ("kept", "missed") for values in recurring[part].values()
                 for v in values]
        assert not any(re.fullmatch(r"/[\w.-]+/?|(feat|fix|docs|chore)(\(.*\))?:?|func", v)
                       for v in found)
    literal = run_replay("retention", "--sessions", str(F5), "--literal", "--json")
    strict = json.loads(literal.stdout)["sessions"][0]["compactions"][0]["recurring"]
    assert set(strict["path_forms"].values()) <= {"literal"}


def call(name: str, call_id: str, **arguments: object) -> dict:
    """An OpenAI-format tool call."""
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_disorder_needs_evidence_and_a_governing_phrase() -> None:
    before = [
        {"role": "assistant", "content": "", "tool_calls": [
            call("Write", "w1", file_path="/repo/src/parser.py", content="x"),
            call("Write", "w2", file_path="/repo/src/lexer.py", content="y")]},
        {"role": "tool", "tool_call_id": "w1", "content": "ok"},
        {"role": "tool", "tool_call_id": "w2", "content": "ok"},
        {"role": "assistant", "content": "", "tool_calls": [
            call("Bash", "t1", command="python -m pytest tests -q")]},
        {"role": "tool", "tool_call_id": "t1", "content": "12 passed in 0.4s"},
        {"role": "assistant", "content": "", "tool_calls": [
            call("Write", "w3", file_path="/repo/src/lexer.py", content="z")]},
    ]
    summary = ("7. Pending Tasks:\n   - Implement parser.py and lexer.py\n"
               "Next we will review `parser.py`.\n```\nparser.py will be parsed\n```\n")
    # parser.py: tests passed after its last write; lexer.py was written again after them
    assert disorder(before, [], summary) == ["parser.py"]
    after = [{"role": "assistant", "content": "", "tool_calls": [
        call("Edit", "e1", file_path="/repo/src/parser.py", old_string="x", new_string="q")]}]
    assert disorder(before, after, summary) == []  # edited again after the boundary
    past = "Implemented parser.py; it should handle every token, the test said \"will fail\"."
    assert disorder(before, [], past) == []  # past tense, "should", a quoted phrase
    assert governed_units("> Next: parser.py\nDone parser.py.") == []


def test_the_pending_phrase_must_govern_an_edit_on_real_summaries() -> None:
    summaries = {path.name[23:36]: [c.summary for c in load_sessions([path])[0].compactions]
                 for path in (VALIDATION / "claude-code-entire-cli-9b-04c3d92e38-3.jsonl.gz",
                              VALIDATION / "claude-code-entire-cli-43-2b48f6b6e6-0.jsonl.gz")}
    # the one flag of the rule before this one: what is left is to verify; "changes" is a noun
    verify = summaries["9b-04c3d92e38"][0]
    line = line_with(verify, "Need to verify no other integration tests broke")
    assert "testenv.go" in line and not governs_an_edit(line)
    assert pending_files(["/repo/testenv.go"], verify) == []
    second = summaries["43-2b48f6b6e6"][1]
    for needle, edit in [("Still need to add the same to:", True),  # the verb after the phrase
                         ("Complete the logging reinit fix", True),  # an imperative opens it
                         ("Need to run fmt/lint/test after completing", False),
                         ("Need to commit and push", False)]:
        assert governs_an_edit(line_with(second, needle)) is edit, needle
    assert pending_files(["/repo/hooks_claudecode_handlers.go"], second) == [
        "hooks_claudecode_handlers.go"]
    for unit, edit in [("parser.py still needs to be updated", True),  # a participle governed
                       ("Just updated one test in lexer.py", False),  # no imperative
                       ("Continue staging type-related changes for lexer.py", False),
                       ("None explicitly pending - the logic fix was just applied", False)]:
        assert governs_an_edit(unit) is edit, unit


def test_the_validation_command_prints_the_documented_table() -> None:
    done = run_replay_script("scripts/validate_retention.py")
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout.split("\n", 1)[1].strip()
    page = (ROOT / "docs" / "retention.md").read_text(encoding="utf-8")
    assert table in page
    assert re.search(r"\| all scored types \| (\d+) \|", table)
    sessions = int(done.stdout.split()[0])
    assert sessions >= 8
    report = score_sessions(load_sessions([VALIDATION]), Limits())
    assert {s.format for s in report.sessions} == {"claude-code", "codex"}
    found = validate(VALIDATION)  # the figures the CLI quotes are today's
    assert (len(found.flagged), found.true_flags) == (VALIDATED_FLAGS, VALIDATED_TRUE)


def run_replay_script(script: str) -> subprocess.CompletedProcess[str]:
    """Run a script of the repository with the project's Python, as a user would."""
    return subprocess.run([sys.executable, str(ROOT / script)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def test_compact_bench_is_scored_against_what_the_real_agent_did_next(tmp_path: Path) -> None:
    folder = ROOT / "instances" / "compact-bench" / "psf__requests-5414"
    history = load_history_file(folder / "history.json")
    shipped = json.loads((folder / "later.json").read_text(encoding="utf-8"))
    assert shipped["provenance"]["commit"].startswith("d12a71a")
    assert shipped["history_messages"] == len(history.messages) and shipped["chars"] > 10_000
    with Store.open(tmp_path / "replay.db") as store:
        reference = reference_of(store, history, {}, Limits(), folder)
        assert reference.source == "suite"  # the store lacks the trajectory; the suite has it
        assert reference.history is not None and reference.later is not None
        chosen = recurring_reference(reference.history, reference.later, Limits())
        assert sum(map(len, chosen.values())) >= 10
        # the summary the issue quotes keeps nothing of it
        glad = score(chosen, "I'm glad you're ready to proceed. Please follow these "
                             "instructions, as requested by me.")
        assert glad.found == 0
        missing = reference_of(store, history, {}, Limits(), tmp_path)
        assert missing.source == "missing"  # no later steps there and no PRE run yet
