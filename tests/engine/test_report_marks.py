"""What real models do, as the report shows it: a summary cut off at its output cap (a server
answering with finish_reason "length") and cells that could not run (a history, or a summary
request, longer than the model's context), end to end through `replay backbone`, `replay report
--cells` (text, Markdown, CSV, JSON) and the web pages. Scripted servers on 127.0.0.1; see
sweep_scripts.py for the agent."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.report.web.pages import page_name

from conftest import run_replay
from sweep_scripts import STOCKROOM, TALLY, agent_scripts, fixture_prompts, models_env, summary

# a reply stopped by the server at its length limit, mid-sentence, with no closing tag
CUT = {"content": "<summary>PLAN-OK: finish the repair that was started; the files are",
       "finish_reason": "length"}
AGENT_WINDOW = 2_000  # tokens: no demo history fits (3,500 and 7,100), a POST (950) does
SUMMARY_WINDOW = 1_000  # tokens: no summary request fits (about 3,500)


def sweep(tmp_path: Path, env: dict[str, str], *args: str):
    return run_replay(*args, "--store", str(tmp_path / "replay.db"), env=env)


def report(tmp_path: Path, env: dict[str, str]) -> tuple[str, Path, Path]:
    """`replay report r --cells --html` run: its output, its exports folder, its site."""
    site = tmp_path / "site"
    done = sweep(tmp_path, env, "report", "r", "--cells", "--html", str(site))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, tmp_path / "reports" / "r", site


def grid_codes(output: str, instance: str) -> list[str]:
    """The codes of an instance's row of the printed grid."""
    row = next(line for line in output.splitlines() if line.startswith(f"│ {instance} "))
    return [part.strip() for part in row.split("│")[2:-1]]


def table_row(output: str, title: str, first: str) -> list[str]:
    """The cells of the row starting with `first` in the printed table titled `title`."""
    lines = output.splitlines()
    start = next(index for index, line in enumerate(lines) if title in line)
    row = next(line for line in lines[start:] if line.startswith(f"│ {first} "))
    return [part.strip() for part in row.split("│")[1:-1]]


def header(output: str, title: str) -> str:
    lines = output.splitlines()
    start = next(index for index, line in enumerate(lines) if title in line)
    return " ".join(lines[start + 1:start + 8])


def test_a_summary_cut_off_at_its_length_limit_is_marked_everywhere(tmp_path: Path) -> None:
    summarizers = [Script([summary("summ-a", True)], model="summ-a"),
                   Script([CUT], model="summ-cut")]
    with ScriptedServer(*agent_scripts(tmp_path), *summarizers) as server:
        env = models_env(tmp_path, {name: (server.base_url, "")
                                    for name in ("agent", "summ-a", "summ-cut")})
        done = sweep(tmp_path, env, "backbone", "--agent-model", "agent", "--model", "summ-a",
                     "--model", "summ-cut", "--instance", STOCKROOM, "--run", "r",
                     "--prompt-sources", str(fixture_prompts(tmp_path)))
        assert done.returncode == 0, done.stdout + done.stderr
        output, folder, site = report(tmp_path, env)
    # the POST continued from what was written (PLAN-OK: it fixed the repository)
    assert grid_codes(output, STOCKROOM) == ["P", "P^"]
    legend = ("^ a summary cut off at the summarizer's output cap (finish_reason length; the "
              "POST continued from what was written): 1 summary(ies), "
              f"{STOCKROOM} post summ-cut:claude-code seed 0")
    assert legend[:60] in output
    assert "truncated" in header(output, "task damage")
    damage = "task damage (damaged / PRE-pass)"
    assert table_row(output, damage, "summ-cut")[6] == "1"
    assert table_row(output, damage, "summ-a")[6] == "0"

    cells = {(row["arm"], row["summarizer"]): row
             for row in csv.DictReader((folder / "cells.csv").open())}
    assert cells[("post", "summ-cut:claude-code")]["truncated"] == "yes"
    assert cells[("post", "summ-a:claude-code")]["truncated"] == ""
    assert cells[("pre", "")]["truncated"] == ""
    outcomes = {row["summarizer"]: row for row in csv.DictReader((folder / "outcomes.csv").open())}
    assert (outcomes["summ-cut:claude-code"]["code"], outcomes["summ-cut:claude-code"]["truncated"],
            outcomes["summ-a:claude-code"]["truncated"]) == ("P^", "True", "False")
    exported = json.loads((folder / "report.json").read_text())
    assert {o["summarizer"]: o["truncated"] for o in exported["outcomes"]} == {
        "summ-a:claude-code": False, "summ-cut:claude-code": True}
    assert {r["summarizer"]: r["truncated"] for r in exported["rates"]} == {
        "summ-a:claude-code": 0, "summ-cut:claude-code": 1}
    markdown = (folder / "report.md").read_text()
    assert f"| {STOCKROOM} | P | P^ |" in markdown and legend + "." in markdown
    assert "| refused | truncated | retention |" in markdown

    grid = (site / "index.html").read_text()
    assert "<dt>^</dt>" in grid and 'class="truncated"' in grid
    cut = (site / page_name(STOCKROOM, "summ-cut:claude-code", 0)).read_text()
    assert 'id="summary-truncated"' in cut and "finish_reason length" in cut
    kept = (site / page_name(STOCKROOM, "summ-a:claude-code", 0)).read_text()
    assert 'id="summary-truncated"' not in kept


def test_cells_that_could_not_run_are_marked_and_counted_as_refused(tmp_path: Path) -> None:
    """No history fits the agent's context (every PRE is refused at its first request) and no
    summary request fits summ-tiny's: the 4 cells that could not run are marked `#`, every
    pair is unevaluated (no PRE verdict), not unsolved, and each table counts them refused."""
    with ScriptedServer(*agent_scripts(tmp_path), context_window=AGENT_WINDOW,
                        dialect="llama.cpp") as agent, \
            ScriptedServer(Script([summary("summ-a", True)], model="summ-a")) as server, \
            ScriptedServer(Script([summary("summ-tiny", True)], model="summ-tiny"),
                           context_window=SUMMARY_WINDOW, dialect="vllm") as small:
        env = models_env(tmp_path, {"agent": (agent.base_url, ""),
                                    "summ-a": (server.base_url, ""),
                                    "summ-tiny": (small.base_url, "")})
        done = sweep(tmp_path, env, "backbone", "--agent-model", "agent", "--model", "summ-a",
                     "--model", "summ-tiny", "--instance", STOCKROOM, "--instance", TALLY,
                     "--run", "r", "--prompt-sources", str(fixture_prompts(tmp_path)))
        assert done.returncode == 0, done.stdout + done.stderr
        output, folder, site = report(tmp_path, env)
    for instance in (STOCKROOM, TALLY):
        assert grid_codes(output, instance) == ["-#", "-#"]
    assert "# a cell that could not run: its first request was refused" in output
    damage = "task damage (damaged / PRE-pass)"
    for name in ("summ-a", "summ-tiny"):
        row = table_row(output, damage, name)
        assert (row[1], row[5]) == ("0/0", "2")  # no PRE-pass pair; both pairs refused
    cells = {(row["instance"], row["arm"], row["summarizer"]): row
             for row in csv.DictReader((folder / "cells.csv").open())}
    assert cells[(TALLY, "pre", "")]["result"] == "refused"
    assert cells[(TALLY, "pre", "")]["refused"].startswith("agent request refused: model 'agent'")
    assert cells[(TALLY, "post", "summ-tiny:claude-code")]["result"] == "refused"
    assert cells[(TALLY, "post", "summ-a:claude-code")]["result"] == "pass"  # it ran

    outcomes = {(row["instance"], row["summarizer"]): row
                for row in csv.DictReader((folder / "outcomes.csv").open())}
    tiny = outcomes[(TALLY, "summ-tiny:claude-code")]
    assert (tiny["label"], tiny["code"], tiny["pre"], tiny["refused"]) == (
        "unevaluated", "-#", "", "")
    assert tiny["not_run"].startswith("PRE agent request refused: model 'agent'")
    assert "; POST summarizer request refused: model 'summ-tiny'" in tiny["not_run"]
    exported = json.loads((folder / "report.json").read_text())
    assert {r["summarizer"]: (r["pre_pass"], r["refused"]) for r in exported["rates"]} == {
        "summ-a:claude-code": (0, 2), "summ-tiny:claude-code": (0, 2)}
    assert "truncated" not in exported["rates"][0]  # no summary was cut off
    markdown = (folder / "report.md").read_text()
    assert f"| {TALLY} | -# | -# |" in markdown
    assert (f"4 cell(s), {STOCKROOM} post summ-tiny:claude-code seed 0, {STOCKROOM} pre seed 0, "
            f"{TALLY} post summ-tiny:claude-code seed 0, {TALLY} pre seed 0.") in markdown

    grid = (site / "index.html").read_text()
    assert '<td class="pre">refused</td>' in grid and "<dt>#</dt>" in grid
    assert re.search(r'<tr class="refused"><th>[^<]*</th><td></td>\s*<td>2</td><td>2</td>', grid)
    page = (site / page_name(TALLY, "summ-tiny:claude-code", 0)).read_text()
    assert 'id="not-run"' in page and 'id="summary-refused"' in page
    assert "could not run: summarizer request refused: model &#39;summ-tiny&#39;" in page
    assert "no continuation in the store yet" not in page
    assert "exit refused (agent request refused: model &#39;agent&#39;" in page  # the PRE side
