"""Issue 21's bad-input table, as a user meets it on the command line: each case is one line
naming the problem, exit code 2, and nothing written (no new store, an existing store
byte-identical, no file beside it)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from replay.records.plan import Plan
from replay.store import Store
from replay.store.runs import save_run
from replay.store.schema import SCHEMA_VERSION

from conftest import one_line_exit_2, replay_here
from sweep_scripts import DEMO, TALLY

GONE = "openai:a@http://127.0.0.1:9/v1"
RUN = ["cell", "--instance", TALLY, "--agent-model", GONE]
BACKBONE = ["backbone", "--agent-model", GONE, "--model", GONE, "--instance", TALLY]
ROW = {key: value for key, value in json.loads(
    (DEMO[TALLY].bundle / "instance.json").read_text()).items()}


def tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` with the sha256 of its bytes."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def a_store(folder: Path) -> Path:
    """A store holding one run, as a sweep leaves it."""
    store = folder / "runs" / "replay.db"
    with Store.open(store) as opened:
        save_run(opened, "taken", Plan(kind="backbone", agent=GONE, agent_id="other",
                                       instances=(TALLY,), summarizers=("anchor_index",)))
    return store


def refused_twice(args: list[str], message: str, tmp_path: Path) -> None:
    """Refused with no store (none is made) and with one (left byte-identical)."""
    fresh = tmp_path / "fresh" / "replay.db"
    one_line_exit_2(replay_here(*args, "--store", str(fresh)), message)
    assert not fresh.exists() and not fresh.parent.exists()
    store = a_store(tmp_path / "kept")
    before = tree(store.parent)
    one_line_exit_2(replay_here(*args, "--store", str(store)), message)
    assert tree(store.parent) == before


@pytest.mark.parametrize("args, message", [
    ([*RUN, "--arm", "middle"], "unknown arm 'middle': use pre or post"),
    ([*RUN, "--arm", "post"], "--arm post needs --summarizer"),
    ([*RUN, "--arm", "pre", "--carrier", "x"], "unknown carrier 'x'"),
    ([*RUN, "--arm", "pre", "--history", "abcdef"],
     f"no stored Phase A history for instance {TALLY} with id abcdef"),
    ([*BACKBONE, "--history", "abcdef"], "--history abcdef: no history bundled"),
    ([*BACKBONE, "--executor", "slurm"], "unknown executor 'slurm'"),
    (["prompt", "--agent-model", GONE, "--summarizer", GONE, "--instance", TALLY,
      "--executor", "slurm"], "unknown executor 'slurm'"),
    ([*BACKBONE, "--carrier", "x"], "unknown carrier 'x'"),
    ([*BACKBONE, "--baseline", "tail:0"], "summarizer 'tail:0': tail:N keeps the last N"),
    ([*BACKBONE, "--baseline", "tail:0", "--dry-run"], "summarizer 'tail:0'"),
    (["collect", "--model", "openai:a#REPLAY_TEST_UNSET_KEY", "--boundary", "steps:1",
      "--instance", TALLY], "model 'openai:a#REPLAY_TEST_UNSET_KEY' needs an API key"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_bad_options_leave_no_store_and_an_existing_one_unchanged(
        args: list[str], message: str, tmp_path: Path) -> None:
    refused_twice(args, message, tmp_path)


@pytest.mark.parametrize("text, message", [
    ("[[prompt]\nname=", "cannot read prompt sources"),
    ('[[prompt]]\nname = "x"\n', "invalid prompt sources"),
])
def test_a_malformed_prompt_catalogue_leaves_no_store(text: str, message: str,
                                                      tmp_path: Path) -> None:
    catalogue = tmp_path / "sources.toml"
    catalogue.write_text(text)
    refused_twice([*BACKBONE, "--prompt-sources", str(catalogue)], message, tmp_path)


@pytest.mark.parametrize("name, content, message", [
    ("broken.json", "{not json", "not valid JSON"),
    ("other.json", json.dumps({"foo": 1}), "unknown trajectory format"),
    ("broken.traj", json.dumps({"trajectory": "x"}), "unknown trajectory format"),
    ("binary.json", b"\xff\xfe\x00binary", "cannot read"),
])
def test_a_malformed_import_file_leaves_no_store(name: str, content: str | bytes,
                                                 message: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    refused_twice(["import", str(path), "--instance", TALLY], f"{path}: {message}", tmp_path)


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize("rows, message", [
    ([ROW, ROW], f"instance id {TALLY} appears twice"),
    ([{**ROW, "eval_type": "bogus"}], "field eval_type: Input should be 'pass_and_fail' or "
                                      "'fail_only'"),
    ([{**ROW, "log_parser": "parse_log_nothing"}],
     "field log_parser: unknown log parser 'parse_log_nothing'"),
    ([{**ROW, "instance_id": "../../x"}], "instance ../../x: field instance_id: '../../x' is "
                                          "not a safe id"),
    ([{**ROW, "instance_id": "/tmp/x"}], "instance /tmp/x: field instance_id"),
], ids=["duplicate", "eval_type", "log_parser", "traversal", "absolute"])
def test_a_bad_dataset_row_is_refused_when_read(rows: list[dict], message: str,
                                                tmp_path: Path) -> None:
    dataset = write_rows(tmp_path / "rows.jsonl", rows)
    done = replay_here("validate", "--dataset", str(dataset), "--store",
                      str(tmp_path / "replay.db"))
    assert message in done.stderr, done.stderr
    one_line_exit_2(done, str(dataset))
    assert not (tmp_path / "replay.db").exists()


@pytest.mark.parametrize("name, data", [
    ("rows.jsonl", bytes(range(256)) * 2),
    ("rows.json", json.dumps([ROW]).encode("utf-16")),
], ids=["binary", "utf-16"])
def test_a_dataset_that_is_not_utf8_is_one_line(name: str, data: bytes, tmp_path: Path) -> None:
    dataset = tmp_path / name
    dataset.write_bytes(data)
    done = replay_here("validate", "--dataset", str(dataset), "--store",
                      str(tmp_path / "replay.db"))
    one_line_exit_2(done, f"{dataset}: not UTF-8 text")
    assert not (tmp_path / "replay.db").exists()


def a_suite(folder: Path, toml: str, record: dict | None = None) -> Path:
    """A suite folder: suite.toml and, with `record`, instance `evil` (the tally demo's
    repository) whose instance.json is `record`."""
    folder.mkdir(parents=True)
    (folder / "suite.toml").write_text(toml)
    if record is not None:
        shutil.copytree(DEMO[TALLY].bundle / "repo", folder / "evil" / "repo")
        (folder / "evil" / "instance.json").write_text(json.dumps(record))
    return folder


@pytest.mark.parametrize("toml, record, message", [
    ("instances = 5\n", None, "`instances` must be a list of instance ids"),
    ('instances = ["../../elsewhere"]\n', None, "instance id '../../elsewhere' is not a safe"),
    ('instances = ["evil", "evil"]\n', ROW, "instance id evil appears twice"),
    ("description = 3\n", None, "`description` must be text"),
    ('instances = ["evil"]\n', {**ROW, "instance_id": "../../x"}, "field instance_id"),
    ('instances = ["evil"]\n', {**ROW, "log_parser": "parse_log_nothing"},
     "field log_parser: unknown log parser"),
    ('instances = ["evil"]\n', {**ROW, "eval_type": "bogus"}, "field eval_type"),
], ids=["instances-5", "traversal-entry", "twice", "description", "traversal-id",
        "log_parser", "eval_type"])
def test_a_bad_suite_is_refused_before_anything_is_built(toml: str, record: dict | None,
                                                         message: str, tmp_path: Path) -> None:
    suite = a_suite(tmp_path / "suite", toml, record)
    done = replay_here("validate", "--suite", str(suite), "--store", str(tmp_path / "replay.db"))
    assert message in done.stderr, done.stderr
    one_line_exit_2(done, str(suite))
    assert not (tmp_path / "replay.db").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["suite"]


def sqlite_file(path: Path, *statements: str) -> Path:
    with sqlite3.connect(path) as db:
        for statement in statements:
            db.execute(statement)
    return path


META = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


VALIDATE = ["validate", "--instance", TALLY]
SCHEMAS = [
    ([META, "INSERT INTO meta VALUES ('schema_version', '1')", "CREATE TABLE validations (x)"],
     "is not a store of this replay: its table validations has no column instance_id"),
    (["CREATE TABLE users (id INTEGER)", "INSERT INTO users VALUES (1)"],
     "is not a replay store: an SQLite file with other tables (users)"),
    ([META, "INSERT INTO meta VALUES ('schema_version', '0')"],
     f"is not a store of this replay: schema version 0, not 1 to {SCHEMA_VERSION}"),
    ([META, "INSERT INTO meta VALUES ('schema_version', '9')"],
     "has schema version 9, newer than this replay"),
]
RUNS_OF_ANOTHER_SCHEMA = [META, "INSERT INTO meta VALUES ('schema_version', '1')",
                          "CREATE TABLE runs (name TEXT)"]


@pytest.mark.parametrize("statements, message, command", [
    *[(*SCHEMAS[0], command) for command in (VALIDATE, ["report"], BACKBONE)],
    *[(*schema, command) for schema, command in zip(SCHEMAS[1:], (VALIDATE, ["report"],
                                                                  BACKBONE), strict=True)],
    (RUNS_OF_ANOTHER_SCHEMA, "its table runs has no column digest", ["report"]),
    (RUNS_OF_ANOTHER_SCHEMA, "its table runs has no column digest", BACKBONE),
], ids=lambda value: value[0] if isinstance(value, list) and value[0].isalpha() else None)
def test_a_store_of_another_schema_is_refused_unchanged(statements: list[str], message: str,
                                                        command: list[str],
                                                        tmp_path: Path) -> None:
    store = sqlite_file(tmp_path / "other.db", *statements)
    before = tree(tmp_path)
    done = replay_here(*command, "--store", str(store))
    one_line_exit_2(done, "")
    assert message in done.stderr, done.stderr
    assert tree(tmp_path) == before


def test_report_out_naming_a_file_is_refused(tmp_path: Path) -> None:
    store = a_store(tmp_path)
    a_file = tmp_path / "exports.txt"
    a_file.write_text("mine")
    before = tree(tmp_path)
    for option in ("--out", "--html"):
        done = replay_here("report", "taken", "--store", str(store), option, str(a_file))
        one_line_exit_2(done, f"{option} {a_file} is a file: give a folder")
    assert tree(tmp_path) == before
