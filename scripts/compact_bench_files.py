"""The compact-bench suite's own files: suite.toml (ids and rule) and SELECTION.md (decisions)."""

from __future__ import annotations

import json
import re
from pathlib import Path

DESCRIPTION = (
    "Real SWE-bench Verified repairs resumed from real agents' histories: the study's nine "
    "public instances plus localized repairs chosen by the rule below, each with a Phase A "
    "history imported from a published mini-swe-agent trajectory (Gemini 3 Pro Preview) and "
    "cut before the agent's first edit of a non-test file. Rows come from the dataset "
    "(--dataset FILE offline); mirrors of the repositories via --repo-mirror.")
RULE = (
    "The study's nine public instances first; then SWE-bench Verified rows, repositories "
    "taking turns in alphabetical order, each repository's rows in the order of sha256(instance "
    "id), kept when: (a) the gold patch changes exactly one file, not a test file; (b) at most "
    "10 FAIL_TO_PASS tests; (c) the repository has a recipe here and a bare mirror fetchable "
    "here (under 500 MB: not django, matplotlib, scikit-learn); (d) the published run "
    "gruckion/mini-swe-agent@d12a71a (mini-swe-agent 1.15.0, Gemini 3 Pro Preview) has its "
    "trajectory; (e) its before-edit boundary keeps at least 3 steps; (f) `replay validate` "
    "passes offline on the local backend with that boundary's snapshot. At most 5 rows per "
    "repository; stop at 35. Built by scripts/build_compact_bench.py; every decision is in "
    "SELECTION.md.")


def write_suite(folder: Path, ids: list[str]) -> None:
    """Write suite.toml: description, rule, dataset, boundary and the kept ids in order."""
    lines = [f"description = {json.dumps(DESCRIPTION)}", f"rule = {json.dumps(RULE)}",
             'dataset = "princeton-nlp/SWE-bench_Verified"', 'boundary = "before-edit"',
             "instances = ["]
    lines += [f'  "{ident}",' for ident in ids]
    lines.append("]")
    (folder / "suite.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_selection(folder: Path, decisions: list[tuple[str, bool, str]],
                    source: dict[str, str]) -> None:
    """Write SELECTION.md: every row the rule considered, kept or not, and why."""
    kept = sum(1 for _, is_kept, _ in decisions if is_kept)
    lines = ["# compact-bench: how the rule chose the rows", "",
             f"Trajectories: {source['repository']} at {source['commit']}, folder "
             f"`{source['folder']}` ({source['agent']}, {source['model']}, "
             f"{source['license']}).", "",
             f"{len(decisions)} rows considered in the rule's order, {kept} kept.", "",
             "| # | instance | decision |", "|---|---|---|"]
    for number, (ident, is_kept, reason) in enumerate(decisions, 1):
        # No machine paths: the tools' and the mirrors' folders are this machine's.
        text = re.sub(r"\S*/bin/(uv|python)\b", r"\1", reason)
        text = re.sub(r"file://\S*/", "the mirror ", text)
        text = text if len(text) <= 240 else text[:239] + "…"
        text = text.replace("|", "\\|")
        lines.append(f"| {number} | {ident} | {'**kept**' if is_kept else 'set aside'}: "
                     f"{text} |")
    (folder / "SELECTION.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
