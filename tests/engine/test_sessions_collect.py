"""`replay sessions collect` on a real slice: a git repository built here whose
`entire/checkpoints/v1` branch holds the real transcripts under tests/fixtures/sessions, one of
them split over two checkpoints, one session whose transcript is missing, and planted secrets;
then `replay retention --corpus` on what it wrote. The command line runs in this process
(`replay_here`): what it prints and writes is what is asserted."""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from replay.corpus.redaction import Redactor
from replay.measures.details import KINDS

from conftest import one_line_exit_2, replay_here
from paths import FIXTURES, ROOT

FIXTURES = FIXTURES / "sessions"
CLAUDE = FIXTURES / "claude-code-entire-cli-3-compactions.jsonl.gz"
CODEX = FIXTURES / "codex-agentv-3-compactions.jsonl.gz"
PLANTED = {"secret": "sk-ant-api03-PLANTEDplantedPLANTED0123456789",
           "email": "jane.doe@example.org", "private-ip": "192.168.31.7"}


def _lines(path: Path) -> list[str]:
    return [line for line in gzip.decompress(path.read_bytes()).decode().splitlines()
            if line.strip()]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                        "PATH": "/usr/bin:/bin"})


def _shard(repo: Path, folder: str, session: str, created: str, start: int,
           lines: list[str] | None) -> None:
    path = repo / folder
    path.mkdir(parents=True)
    (path / "metadata.json").write_text(json.dumps({
        "session_id": session, "created_at": created, "agent": "Claude Code",
        "transcript_lines_at_start": start}))
    if lines is not None:
        (path / "full.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with an MIT licence on main and three sessions on the checkpoint branch."""
    repo = tmp_path_factory.mktemp("entire")
    _git(repo, "init", "-q", "-b", "main")
    (repo / "LICENSE").write_text("MIT License\n\nCopyright (c) 2026 Entire Inc.\n")
    _git(repo, "add", "LICENSE")
    _git(repo, "commit", "-q", "-m", "licence")
    _git(repo, "checkout", "-q", "--orphan", "entire/checkpoints/v1")
    _git(repo, "rm", "-q", "--cached", "LICENSE")
    (repo / "LICENSE").unlink()
    claude = _lines(CLAUDE)
    planted = json.loads(claude[5])
    planted["message"] = {"role": "user", "content": "key {secret}, mail {email}, db at "
                          "{private-ip}:5432".format(**PLANTED)}
    claude.insert(6, json.dumps(planted))
    _shard(repo, "3a/1111111111/0", "claude-1", "2026-01-23T10:00:00Z", 0, claude[:40])
    _shard(repo, "9f/2222222222/0", "claude-1", "2026-01-23T11:00:00Z", 40, claude)
    _shard(repo, "0b/3333333333/1", "codex-1", "2026-06-18T10:00:00Z", 0, _lines(CODEX))
    _shard(repo, "c4/4444444444/0", "lost-1", "2026-02-01T10:00:00Z", 900, None)
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "checkpoints")
    _git(repo, "checkout", "-q", "main")
    return repo


@pytest.fixture(scope="module")
def corpus(checkpoints: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("collected") / "corpus"
    done = replay_here("sessions", "collect", str(checkpoints), "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "wrote 3 session(s)" in done.stdout and "1 incomplete" in done.stdout
    return out


def test_shards_join_in_order_and_secrets_never_reach_the_disk(corpus: Path,
                                                                checkpoints: Path) -> None:
    written = (corpus / "sessions" / checkpoints.name / "claude-1.jsonl").read_text()
    for value in PLANTED.values():
        assert value not in written
    assert "<secret-1-redacted>" in written and "<private-ip-1-redacted>" in written
    joined = [json.loads(line) for line in written.splitlines()]
    original = _lines(CLAUDE)
    assert len(joined) == len(original) + 1  # the 40 lines of the first shard appear once
    assert joined[0] == json.loads(original[0]) and joined[-1] == json.loads(original[-1])


def test_manifest_and_provenance_name_every_session(corpus: Path, checkpoints: Path) -> None:
    manifest = tomllib.loads((corpus / "corpus.toml").read_text())
    sessions = {entry["session_id"]: entry for entry in manifest["session"]}
    assert set(sessions) == {"claude-1", "codex-1", "lost-1"}
    claude = sessions["claude-1"]
    assert (claude["shards"], claude["boundaries"], claude["licence"]) == (2, 3, "MIT")
    assert claude["path"] == "9f/2222222222/0" and claude["complete"] is True
    assert sessions["lost-1"]["complete"] is False
    assert sessions["codex-1"]["boundaries"] == 3
    assert manifest["redaction"]["private-ip"] >= 1 and manifest["redaction"]["secret"] >= 1
    commit = subprocess.run(["git", "-C", str(checkpoints), "rev-parse",
                             "entire/checkpoints/v1"], capture_output=True, text=True).stdout
    rows = list(csv.DictReader((corpus / "PROVENANCE.tsv").open(), delimiter="\t"))
    assert {row["commit"] for row in rows} == {commit.strip()}
    assert {row["repository"] for row in rows} == {checkpoints.name}


def test_a_git_url_is_cloned(checkpoints: Path, tmp_path: Path) -> None:
    done = replay_here("sessions", "collect", f"file://{checkpoints}", "--out",
                      str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    assert len(tomllib.loads((tmp_path / "c" / "corpus.toml").read_text())["session"]) == 3


def test_bad_input_is_one_line_and_writes_nothing(checkpoints: Path, tmp_path: Path) -> None:
    one_line_exit_2(replay_here("sessions", "collect", str(tmp_path / "nowhere"), "--out",
                               str(tmp_path / "a")), f"{tmp_path / 'nowhere'}: no such folder")
    plain = tmp_path / "plain"
    _git(tmp_path, "init", "-q", str(plain))
    one_line_exit_2(replay_here("sessions", "collect", str(plain), "--out", str(tmp_path / "b")),
                    "plain: no branch entire/checkpoints/v1")
    (tmp_path / "taken").mkdir()
    one_line_exit_2(replay_here("sessions", "collect", str(checkpoints), "--out",
                               str(tmp_path / "taken")), f"{tmp_path / 'taken'}: already exists")
    one_line_exit_2(replay_here("sessions", "collect", str(checkpoints), "--out",
                               str(tmp_path / "no" / "x")), f"{tmp_path / 'no' / 'x'}: its folder")
    broken = tmp_path / "broken"
    _git(tmp_path, "init", "-q", "-b", "entire/checkpoints/v1", str(broken))
    (broken / "ab" / "1234567890" / "0").mkdir(parents=True)
    (broken / "ab" / "1234567890" / "0" / "metadata.json").write_text("{not json")
    _git(broken, "add", ".")
    _git(broken, "commit", "-q", "-m", "broken")
    one_line_exit_2(replay_here("sessions", "collect", str(broken), "--out", str(tmp_path / "c")),
                    "broken: ab/1234567890/0/metadata.json is not JSON")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken", "plain", "taken"]


def test_redaction_catches_planted_values_and_counts_scored_ones() -> None:
    redactor = Redactor()
    text = ("ssh admin@10.0.4.12 with ghp_" + "a1B2" * 9 + " then password=hunter2hunter22 "
            "and password: user.password; write to ops@corp.example.com; 8.8.8.8 stays")
    out = redactor.text(text)
    assert "10.0.4.12" not in out and "ghp_" not in out and "hunter2hunter22" not in out
    assert "ops@corp.example.com" not in out and "admin@10.0.4.12" not in out
    assert "user.password" in out and "8.8.8.8" in out
    assert redactor.counts["private-ip"] == 1 and redactor.counts["secret"] == 2
    assert redactor.text("again 10.0.4.12") == "again " + redactor.placeholders["10.0.4.12"]
    assert redactor.scored["private-ip"] >= 1  # an IP is a host retention scores: counted


def test_retention_scores_the_corpus_and_resumes(corpus: Path, tmp_path: Path) -> None:
    done = replay_here("retention", "--corpus", str(corpus), "--csv", str(tmp_path / "t.csv"),
                      "--plot", str(tmp_path / "p.png"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "15.7% (n=106)" in done.stdout and "1 incomplete" in done.stdout
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    rows = list(csv.DictReader((tmp_path / "t.csv").open()))
    first = next(row for row in rows if row["row"] == "boundary 1")
    assert int(first["n"]) >= 1
    assert len(list((corpus / ".scores").iterdir())) == 2
    again = replay_here("retention", "--corpus", str(corpus), "--json")
    data = json.loads(again.stdout)
    assert data["incomplete"] == 1 and data["sessions"] == 2
    future = next(r for r in data["rows"] if r["label"] == "with at least one future detail")
    assert future["n"] == 6 and 1 <= future["value"] <= 6  # Codex's remote compactions count
    assert [r["n"] for r in data["rows"] if r["label"] == "boundary 1"] == [int(first["n"])]
    one_line_exit_2(replay_here("retention", "--corpus", str(tmp_path)),
                    f"{tmp_path}: no corpus.toml")
    one_line_exit_2(replay_here("retention", "--corpus", str(corpus), "--kinds", "path,nope"),
                    "--kinds: unknown detail type 'nope'")
    named = replay_here("retention", "--corpus", str(corpus), "--kinds", "command,path")
    assert "Detail types scored: command, path (named by --kinds" in " ".join(named.stdout.split())
    narrow = json.loads(replay_here("retention", "--corpus", str(corpus), "--kinds", "command",
                                   "--json").stdout)
    assert len(list((corpus / ".scores").iterdir())) == 6  # records kept per set of kinds
    assert narrow["sessions"] == 2
    assert (narrow["scored_kinds"], narrow["kinds_named"]) == (["command"], True)


def _passing_kinds() -> list[str]:
    """The types whose precision on the shipped labels is at least 0.95, counted here from the
    file itself."""
    labels = ROOT / "replay" / "corpus" / "labels.tsv"
    counts: dict[str, list[int]] = {}
    for row in csv.DictReader(labels.open(), delimiter="\t", quoting=csv.QUOTE_NONE):
        counts.setdefault(row["kind"], [0, 0])[row["label"] == "detail"] += 1
    return [kind for kind in KINDS if kind in counts
            and counts[kind][1] / sum(counts[kind]) >= 0.95]


def test_the_default_scores_the_types_the_labels_pass(corpus: Path, tmp_path: Path) -> None:
    passing = _passing_kinds()
    assert passing and len(passing) < 10  # the labels pass some types and fail others
    done = replay_here("retention", "--corpus", str(corpus), "--csv", str(tmp_path / "t.csv"))
    assert done.returncode == 0, done.stdout + done.stderr
    printed = " ".join(done.stdout.split())
    assert f"Detail types scored: {', '.join(passing)} (measured precision >= 0.95 on the " \
        "shipped labels); not scored: " in printed
    data = json.loads(replay_here("retention", "--corpus", str(corpus), "--json").stdout)
    assert data["kinds_named"] is False
    assert sorted(data["scored_kinds"]) == sorted(passing)
    types = {row["label"]: row for row in data["rows"] if row["table"] == "detail types"}
    assert len(types) == 11  # every type, scored or not, with why
    for kind, row in types.items():
        scored = row["study"].startswith("scored")
        assert scored == (kind in passing), row
        assert scored or row["study"] in ("not scored (precision under 0.95)",
                                          "not scored (no labelled values)")
    assert types["number"]["n"] == 0 and types["number"]["value"] is None
    written = [row for row in csv.DictReader((tmp_path / "t.csv").open())
               if row["table"] == "detail types"]
    assert len(written) == 11


def test_a_transcript_not_in_json_lines_is_counted_incomplete(tmp_path: Path) -> None:
    """A session exported as one pretty-printed JSON document (as OpenCode's are) is written,
    listed as incomplete and never scored as if whole."""
    repo = tmp_path / "export"
    _git(tmp_path, "init", "-q", "-b", "entire/checkpoints/v1", str(repo))
    export = {"info": {"id": "ses_1"}, "messages": [{"role": "user", "parts": ["fix it"]},
                                                    {"role": "assistant", "parts": ["done"]}]}
    _shard(repo, "5e/5555555555/0", "opencode-1", "2026-03-01T10:00:00Z", 0,
           json.dumps(export, indent=2).splitlines())
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "export")
    done = replay_here("sessions", "collect", str(repo), "--out", str(tmp_path / "c"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 incomplete" in done.stdout
    [entry] = tomllib.loads((tmp_path / "c" / "corpus.toml").read_text())["session"]
    assert entry["session_id"] == "opencode-1" and entry["complete"] is False
    scored = json.loads(replay_here("retention", "--corpus", str(tmp_path / "c"), "--json").stdout)
    assert (scored["incomplete"], scored["sessions"]) == (1, 0)
