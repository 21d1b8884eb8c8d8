"""What a stage and a remote worker get of the store's files: a writer while a continuation
runs, and packed files that another store takes; never a path to write to."""

from __future__ import annotations

import pickle
from pathlib import Path

from replay.core.vocab import ValidationStatus
from replay.records.continuation import KeptContinuation
from replay.records.grade import Grade
from replay.records.trace import Trace
from replay.records.validation import Validation
from replay.store import Store, continuations, validations

KEY = "k" * 64


def test_a_running_continuation_writes_through_its_writer_and_reads_back(tmp_path: Path) -> None:
    trace = Trace(messages=[{"role": "user", "content": "fix it"}], start_index=1)
    with Store.open(tmp_path / "replay.db") as store:
        writer = continuations.writer(store, KEY)
        writer.trace(trace)
        writer.trace(trace.ended("finished"))  # each step replaces the last, whole
        writer.tree(b"diff --git a/x b/x\n")
        log = writer.tests_log("1 passed\n")
        assert continuations.trace(store, KEY) == trace.ended("finished")
        assert continuations.tree(store, KEY) == b"diff --git a/x b/x\n"
        assert continuations.tests_log(store, KEY) == "1 passed\n"
        assert Path(log).read_text() == "1 passed\n"
        assert continuations.trace(store, "n" * 64) is None
        assert continuations.tree(store, "n" * 64) is None


def test_a_workers_continuation_and_validation_are_taken_with_their_files(
        tmp_path: Path) -> None:
    with Store.open(tmp_path / "node" / "replay.db") as node:
        writer = continuations.writer(node, KEY)
        writer.trace(Trace(messages=[], start_index=0))
        grade = Grade(resolved=True, status="RESOLVED_FULL", tests_ran=True,
                      log_path=writer.tests_log("ok\n"))
        kept = KeptContinuation(KEY, "one", "pre", True, grade, ("c" * 64,))
        continuations.keep(node, kept)
        (tmp_path / "node" / "artifacts" / "continuations" / KEY[:24] / ".x.partial").write_text(
            "half")  # a write under way is never sent
        packed = pickle.loads(pickle.dumps(continuations.files(node, KEY)))  # as Ray sends it
        validations.test_log(node, "one", "gold.log")("gold\n")
        verdict = Validation("one", ValidationStatus.VALID, [], {"with_gold": {"passed": True}})
        logs = validations.files(node, "one")
    with Store.open(tmp_path / "run" / "replay.db") as run:
        continuations.take(run, kept, packed)
        validations.take(run, "local", verdict, logs)
        found = continuations.find(run, KEY)
        assert found is not None and found.calls == kept.calls and found.passed
        assert found.grade.log_path is not None and Path(found.grade.log_path).is_relative_to(
            tmp_path / "run")  # the log the grade names is this store's copy
        assert continuations.tests_log(run, KEY) == "ok\n"
        assert continuations.trace(run, KEY) == Trace(messages=[], start_index=0)
        assert validations.find(run, "one", "local") == verdict
    taken = sorted(path.name for path in (tmp_path / "run" / "artifacts").rglob("*"))
    assert ".x.partial" not in taken and "gold.log" in taken
