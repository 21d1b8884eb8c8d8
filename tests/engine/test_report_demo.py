"""`replay report` on a real demo-suite sweep with a scripted server that damages two of the
three instances: the damage with its interval, the pairs line, the cost per cell; the power line
of `--dry-run`; and `--budget` stopping a sweep."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest

from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.store import Store
from replay.store.runs import load_cells

from conftest import run_replay
from sweep_scripts import DEMO, TALLY, fix_turn, fixture_prompts, models_file, summarizer_scripts


def agent(scratch: Path) -> list[Script]:
    """PRE fixes every demo repository; a POST from a LOST summary fixes tally only, so
    summ-b (whose summaries are LOST) damages stockroom and iniconf."""
    return [Script([fix_turn([DEMO[TALLY]], scratch)], model="agent", contains="LOST"),
            Script([fix_turn(list(DEMO.values()), scratch)], model="agent")]


@pytest.fixture
def sweep(tmp_path: Path):  # noqa: ANN201 (a generator fixture)
    """A function running `replay backbone` with summ-a and summ-b on the scripted server."""
    store = tmp_path / "runs" / "replay.db"
    catalogue = fixture_prompts(tmp_path)
    with ScriptedServer(*summarizer_scripts(), *agent(tmp_path)) as server:
        env = models_file(tmp_path, server.base_url)

        def run(*extra: str) -> subprocess.CompletedProcess[str]:
            return run_replay("backbone", "--model", "summ-a", "--model", "summ-b",
                              "--agent-model", "agent", "--store", str(store), "--run", "demo",
                              "--prompt-sources", str(catalogue), *extra, env=env)

        yield run, store, env


def test_a_budget_stops_a_sweep_and_the_report_prints_damage_its_interval_pairs_and_cost(
        sweep) -> None:
    """A budget stops starting cells and keeps those done; the sweep run again finishes; the
    report of the whole run prints the damage with its interval, the pairs and the cost."""
    run, store, env = sweep
    dry = run("--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "power: at most 3 PRE-pass instance(s): too few to tell any two summarizers apart" \
        in dry.stdout
    stopped = run("--budget", "0.05")
    assert stopped.returncode == 1, stopped.stdout + stopped.stderr
    line = next(line for line in stopped.stdout.splitlines() if line.startswith("budget"))
    assert line.startswith("budget $0.05 reached: spent $")
    with Store.open(store) as opened:
        cells = load_cells(opened, "demo")
    assert 0 < len(cells) < 9 and all(c.status == "done" for c in cells.values())
    spent = sum(c.spent.cost for c in cells.values())
    assert spent <= 0.05 and f"spent ${spent:.4f}" in line
    assert f"{9 - len(cells)} cell(s) not started" in line
    for cell in cells.values():  # every cell that ran kept its dry-run estimate, an upper bound
        assert cell.estimate >= cell.spent.cost > 0
    finished = run()
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert f"{9 - len(cells)} run, 0 kept from the store" in finished.stdout
    report_of_the_whole_run(store, env)

    again = run()
    assert again.returncode == 0
    assert "all 9 cell(s) of the plan were already in the store: nothing ran" in again.stdout


def report_of_the_whole_run(store: Path, env: dict[str, str]) -> None:
    """`replay report demo`: damage with its Wilson interval, the McNemar line, the pairs, the
    cost of each cell in the exports."""
    report = run_replay("report", "demo", "--store", str(store), env=env)
    assert report.returncode == 0, report.stderr
    lines = report.stdout.splitlines()
    damaged = next(line for line in lines if "summ-b" in line and "/3" in line)
    assert "2/3 (66.7%, 20.8-93.9%)" in damaged  # Wilson, as test_statistics checks
    assert "0/3 (0.0%, 0.0-56.1%)" in next(line for line in lines
                                           if "summ-a" in line and "/3" in line)
    assert any(line.startswith("k/n (rate, low-high%): the rate and its 95% Wilson")
               for line in lines)
    verdict = next(line for line in lines if line.startswith("no summarizer differs"))
    assert verdict.startswith("no summarizer differs from another at 95%: n=3 (exact McNemar")
    assert "summ-a vs summ-b, p=0.5" in verdict  # two discordant instances, both one way

    folder = store.parent / "reports" / "demo"
    rows = list(csv.DictReader((folder / "cells.csv").open()))
    assert len(rows) == 3 + 6
    for row in rows:  # prices 1.0 in, 2.0 out per million tokens (sweep_scripts.models_file)
        tokens_in, tokens_out = int(row["tokens_in"]), int(row["tokens_out"])
        assert tokens_in > 0 and tokens_out > 0 and float(row["seconds"]) > 0
        assert float(row["dollars"]) == pytest.approx((tokens_in + 2 * tokens_out) / 1e6,
                                                      abs=2e-6)
        assert float(row["estimated_dollars"]) >= float(row["dollars"])  # an upper bound
    exported = json.loads((folder / "report.json").read_text())
    rate = next(r for r in exported["rates"] if r["summarizer"] == "summ-b:claude-code")
    assert rate["rate_interval"] == pytest.approx({"low": 0.2077, "high": 0.9385}, abs=1e-4)
    pairs = exported["pairs"]["damage"]
    assert [(p["first"], p["second"], p["n"], p["first_only_passes"], p["second_only_passes"])
            for p in pairs] == [("summ-a", "summ-b", 3, 2, 0)]
    by_arm = {row["arm"]: row for row in exported["cost"]["arm"]}
    assert by_arm["pre"]["cells"] == 3 and by_arm["post"]["cells"] == 6
    assert sum(r["dollars"] for r in exported["cost"]["arm"]) == pytest.approx(
        exported["spend"]["cost"], abs=1e-5)
