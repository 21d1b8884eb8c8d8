"""`replay study`: the paper's whole Task Preservation design in one command, on the demo suite
against the scripted model server (see sweep_scripts.py for what each model does), and the dry
run of the real compact-bench design, offline."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest

from replay.models.scripted import ScriptedServer

from conftest import VERIFIED_JSONL, one_line_exit_2, replay_here, run_replay
from sweep_scripts import (
    INICONF,
    STOCKROOM,
    TALLY,
    agent_scripts,
    fixture_prompts,
    models_file,
    summarizer_scripts,
)


def replay(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = run_replay(*args, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def rows(folder: Path, slug: str) -> list[list[str]]:
    with (folder / f"{slug}.csv").open() as table:
        return list(csv.reader(table))


def beside(folder: Path) -> dict[str, tuple[str, str, str]]:
    """figure -> (run, paper, inside) from paper.csv."""
    return {row[1]: (row[2], row[3], row[4]) for row in rows(folder, "paper")[1:]}


def test_the_study_runs_the_design_and_prints_the_papers_tables(tmp_path: Path) -> None:
    """summ-a keeps the thread (except with codex's prompt), summ-b loses it always: stockroom
    is damaged by summ-b (confirmed: 3 of 3 POSTs fail) and by codex's prompt; iniconf's PRE
    fails (outside the comparison); tally is preserved everywhere."""
    store, out = tmp_path / "runs" / "replay.db", tmp_path / "tables"
    command = ["study", "demo", "--agent-model", "agent", "--model", "summ-a",
               "--model", "summ-b=DeepSeek-Flash", "--summarizer", "summ-a",
               "--prompts", "claude-code,codex", "--store", str(store), "--prompt-sources",
               str(fixture_prompts(tmp_path)), "--workers", "2", "--out", str(out)]
    with ScriptedServer(*summarizer_scripts(), *agent_scripts(tmp_path)) as server:
        env = models_file(tmp_path, server.base_url)
        done = replay(env, *command)
        # backbones: 3 PRE + 6 POST (6 summaries); confirmation: 1 pair x 2 seeds (2 summaries);
        # prompts: claude-code's column kept from the backbone run, codex 3 POST (3 summaries)
        assert server.count == (3 + 6 + 6) + (2 + 2) + (3 + 3)
        assert "confirming 1 damaged pair(s)" in done.stdout
        again = replay(env, *command)
        assert server.count == 25 and "already" in again.stdout  # resumed: nothing to run
    a, b = "summ-a", "summ-b (DeepSeek-Flash)"
    assert rows(out, "validation")[1:] == [
        ["instances in the suite", "3", ""], ["excluded by validation", "0", ""],
        ["PRE pass (the comparison set)", "2", ""],
        ["PRE fail (outside the comparison)", "1", INICONF],
        ["PRE not run (or could not run)", "0", ""]]
    assert rows(out, "table6") == [
        ["instance", "PRE", a, b], [STOCKROOM, "pass", "P", "D"], [TALLY, "pass", "P", "P"],
        [INICONF, "fail", "-", "-"], ["damaged / PRE-pass", "", "0/2", "1/2"]]
    assert rows(out, "table7")[1:] == [[STOCKROOM, b, "fail", "fail", "fail", "confirmed"]]
    assert rows(out, "stable_damage")[1:] == [[a, "2", "0", "0/2", "2/2"],
                                              [b, "2", "1", "1/2", "1/2"]]
    assert rows(out, "figure2") == [["backbone", STOCKROOM, TALLY], [a, "P", "P"],
                                    [b, "D!", "P"], ["backbones with stable damage", "1", "0"]]
    assert rows(out, "table3")[1:] == [["claude-code", "2/2"], ["codex", "1/2"]]
    assert rows(out, "table13") == [
        ["instance", "PRE", "claude-code", "codex"], [STOCKROOM, "pass", "P", "D"],
        [TALLY, "pass", "P", "P"], [INICONF, "fail", "-", "-"],
        ["damaged / PRE-pass", "", "0/2", "1/2"]]
    diagnosed = rows(out, "diagnostics")[1:]
    assert [row[:4] for row in diagnosed] == [
        ["study-demo-backbones", STOCKROOM, "summ-b:claude-code", "stable"],
        ["study-demo-prompts", STOCKROOM, "summ-a:codex", "single run"]]
    assert all(row[4] == "0/1" and row[7] == "2/2" for row in diagnosed)  # LOST names no file
    published = beside(out)
    assert published["PRE pass of the repairs"] == ("2/3 (66.7%, 20.8-93.9%)", "22/35 (62.9%)",
                                                    "yes")
    assert published["first-round damaged pairs confirmed"] == (
        "1/1 (100.0%, 20.7-100.0%)", "120/126 (95.2%)", "yes")
    assert published["DeepSeek-Flash: repairs preserved (stable view)"][1:] == (
        "8/22 (36.4%)", "yes")
    assert published["Claude Opus 4.8: repairs preserved (stable view)"] == (
        "not run", "21/22 (95.5%)", "-")
    assert published["GPT-6-Astra: first-round damaged -> confirmed"][:2] == ("not run", "11 -> 9")
    assert published["POST pass, codex"][0].startswith("1/2 ")
    assert published["POST pass, kimi-code"][0] == "not run"
    assert published["stable damage, highest (summ-b (DeepSeek-Flash))"][1] == "64%"
    assert published["kimi-code: damaged instances"][0] == "not run"
    assert (out / "figure2.png").read_bytes()[:4] == b"\x89PNG"
    assert "Figure 2: which backbones damage which repairs" in done.stdout


@pytest.mark.skipif(not VERIFIED_JSONL.is_file(), reason="needs the SWE-bench Verified rows")
def test_the_compact_bench_dry_run_counts_offline(tmp_path: Path) -> None:
    """32 instances, 3 backbones, 5 prompts: 32 x (1 + 3) backbone cells, at most 2 x 32 x 3
    confirmation cells, 32 x (1 + 5) prompt cells; nothing is written."""
    store, backbones = tmp_path / "runs" / "replay.db", tmp_path / "backbones.txt"
    backbones.write_text("# the paper's names\nsumm-a = Claude Opus 4.8\nsumm-b\nsumm-c\n")
    env = models_file(tmp_path, "http://127.0.0.1:9/v1")  # never called
    done = replay(env, "study", "compact-bench", "--dataset", str(VERIFIED_JSONL),
                  "--agent-model", "agent", "--backbones", str(backbones), "--summarizer",
                  "summ-a", "--store", str(store), "--prompt-sources",
                  str(fixture_prompts(tmp_path)), "--dry-run", "--budget", "5")
    text = done.stdout
    assert "instances 32" in text
    assert "(run study-compact-bench-backbones: 3 backbones, prompt claude-code): 128 cells" in text
    assert "192 cells, 192 to run" in text and "(run study-compact-bench-prompts: 5 prompts" in text
    # 8 agent steps a continuation; one summary call a POST (gemini-cli's takes two)
    assert "model calls at most 1120 (96 summaries, 1024 agent steps)" in text
    assert text.count("model calls at most 1728 (192 summaries, 1536 agent steps)") == 2
    lines = {line.split()[0]: line.split()[1:] for line in text.splitlines()
             if line.strip().startswith(("summ-", "agent ", "total"))}
    assert lines["summ-b"][0] == str(32 + 64) and lines["summ-a"][0] == str(32 + 64 + 192)
    assert lines["agent"][0] == f"{8 * (128 + 192 + 192):,}"
    total = lines["total"][-1]  # models.toml of the tests: $1 in, $2 out per million tokens
    assert f"--budget $5.00: below the estimate ({total})" in text
    assert not store.exists()


def test_bad_study_input_is_one_line(tmp_path: Path) -> None:
    done = replay_here("study", "demo", "--store", str(tmp_path / "r.db"), "--dry-run")
    one_line_exit_2(done, "no backbone")
    folder = tmp_path / "file"
    folder.write_text("")
    done = replay_here("study", "demo", "--model", "smollm2", "--out", str(folder), "--dry-run")
    one_line_exit_2(done, f"--out {folder} is a file: give a folder")
    done = replay_here("study", "demo", "--model", "smollm2", "--executor", "nope", "--dry-run")
    one_line_exit_2(done, "unknown executor 'nope'")


def test_a_paper_value_outside_the_runs_interval_says_no() -> None:
    from replay.report.paper_figures import published, rate_beside, share_beside

    paper = published()["prompts"]
    found = rate_beside("POST pass, kimi-code", paper["section"], (2, 22),
                        (paper["post_pass"]["kimi-code"], paper["n"]))
    assert found.row() == ("POST pass, kimi-code", "2/22 (9.1%, 2.5-27.8%)", "19/22 (86.4%)",
                           "no", paper["section"])
    assert share_beside("lowest", "§4.2", (1, 22), 0.05, "5%").inside == "yes"
    assert share_beside("lowest", "§4.2", None, 0.05, "5%").run == "not run"
