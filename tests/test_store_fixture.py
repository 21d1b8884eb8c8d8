"""A store written by an older replay (tests/fixtures/store, see its README) opens, prints the
same report byte for byte, and a sweep extends it, finding every cell and model call it kept."""

from __future__ import annotations

import shutil
from pathlib import Path

from store_fixture import FIXTURE, RUN, SUMMARIZERS, backbone, report, scripted_server
from sweep_scripts import fixture_prompts, models_file


def test_the_kept_store_reports_the_same_and_a_sweep_extends_it(tmp_path: Path) -> None:
    store = tmp_path / "store" / "replay.db"
    shutil.copytree(FIXTURE, store.parent, ignore=shutil.ignore_patterns("*.md", "*.txt"))
    kept = (FIXTURE / "report.txt").read_text()
    catalogue = fixture_prompts(tmp_path)
    with scripted_server(tmp_path / "scratch") as server:
        env = models_file(tmp_path, server.base_url)
        assert report(store, env) == kept
        done = backbone(env, store, catalogue, "extended", (*SUMMARIZERS, "summ-c"))
        # 2 PRE and 4 POST cells of summ-a and summ-b are the kept ones; summ-c's two summaries
        # and its two continuations are the only model calls
        assert "8 cell(s) finished: 2 run, 6 kept from the store" in done.stdout
        assert server.count == 4 and {r.model for r in server.requests} == {"summ-c", "agent"}
        extended = report(store, env, "extended")
    assert report(store, env, RUN) == kept
    assert "│ replay-demo__stockroom-1 │   P    │   D    │   D    │" in extended
    assert "│ replay-demo__iniconf-1   │   R    │   U    │   U    │" in extended
