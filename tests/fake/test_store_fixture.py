"""Stores written by older replays (tests/fixtures/store at 529a986, tests/fixtures/store-10aa733
at 10aa733, see their READMEs) open, print the same report byte for byte without being written,
and a sweep extends them, finding every cell, model call and retention score they kept; the
extended store is upgraded to this replay's schema."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from replay.store.schema import SCHEMA_VERSION, TABLES

from conftest import run_replay
from store_fixture import FIXTURE, RUN, SUMMARIZERS, backbone, report, scripted_server
from sweep_scripts import fixture_prompts, models_file

FIXTURES = [FIXTURE, FIXTURE.with_name("store-10aa733")]


def printed(store: Path, env: dict[str, str], *args: str) -> str:
    """What `replay ARGS --store STORE` prints, its folder written as STORE."""
    done = run_replay(*args, "--store", str(store), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.replace(str(store.parent), "STORE")


def schema(store: Path) -> tuple[str, set[str]]:
    """The store's schema version and tables."""
    with sqlite3.connect(store) as db:
        version = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master "
                                               "WHERE type='table'")}
    db.close()
    return version, tables


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.name)
def test_a_kept_store_reports_the_same_and_a_sweep_extends_it(fixture: Path,
                                                              tmp_path: Path) -> None:
    store = tmp_path / "store" / "replay.db"
    shutil.copytree(fixture, store.parent, ignore=shutil.ignore_patterns("*.md", "*.txt"))
    kept = (fixture / "report.txt").read_text()
    catalogue = fixture_prompts(tmp_path)
    before = store.read_bytes()
    with scripted_server(tmp_path / "scratch") as server:
        env = models_file(tmp_path, server.base_url)
        assert report(store, env) == kept
        if (fixture / "cells.txt").is_file():
            assert printed(store, env, "report", RUN, "--cells") == (
                fixture / "cells.txt").read_text()
        assert store.read_bytes() == before and schema(store)[0] == "1"  # read, not written
        done = backbone(env, store, catalogue, "extended", (*SUMMARIZERS, "summ-c"))
        # 2 PRE and 4 POST cells of summ-a and summ-b are the kept ones; summ-c's two summaries
        # and its two continuations are the only model calls
        assert "8 cell(s) finished: 2 run, 6 kept from the store" in done.stdout
        assert server.count == 4 and {r.model for r in server.requests} == {"summ-c", "agent"}
        extended = report(store, env, "extended")
    assert report(store, env, RUN) == kept
    assert "│ replay-demo__stockroom-1 │   P    │   D    │   D    │" in extended
    assert "│ replay-demo__iniconf-1   │   R    │   U    │   U    │" in extended
    assert schema(store) == (str(SCHEMA_VERSION), set(TABLES))
