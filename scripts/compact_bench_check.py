"""Run `replay backbone` on compact-bench with a scripted model, on a backend of your choice.

A check of the whole pipeline on real instances, not a measurement: the scripted summarizer
answers every compaction with one fixed summary; the scripted agent, speaking the histories'
own dialect (mini-swe-agent text actions), applies the gold patch and submits when it resumes
from the full history (PRE), and submits without a change when it resumes from the summary
(POST). Every cell therefore restores a real boundary snapshot, continues in the history's
dialect, and runs the instance's real tests: a working pipeline labels every instance
`damaged` (PRE resolved, POST not); any other label names an instance to look at.

    .venv/bin/python scripts/compact_bench_check.py --backend local \\
        --dataset ../shared/swebench/SWE-bench_Verified.test.jsonl --repo-mirror MIRRORS

Prints the command's own output, then the labels counted and the wall time.
"""

from __future__ import annotations

import argparse
import base64
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from replay import api
from replay.api.blocks import Script, ScriptedServer, label

MARKER = "[compact-bench check: summary]"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def reply(command: str) -> dict[str, str]:
    """A mini-swe-agent text action running `command`."""
    return {"content": f"THOUGHT: scripted check.\n\n```bash\n{command}\n```"}


def agent_scripts(suite: str, dataset: str) -> list[Script]:
    """POST (the summary is in context) submits unchanged; PRE applies the gold patch."""
    scripts = [Script([reply(SUBMIT)], model="agent", seen=[MARKER])]
    for instance in api.instances(suite, dataset):
        first_line = instance.problem_statement.strip().splitlines()[0].strip()[:60]
        patch = base64.b64encode(instance.patch.encode()).decode()
        command = f"{SUBMIT}; echo {patch} | base64 -d | git apply -"
        scripts.append(Script([reply(command)], model="agent", seen=[first_line]))
    scripts.append(Script([reply(SUBMIT)], model="agent"))
    return scripts


def labels(cells: dict[api.CellId, api.CellResult]) -> dict[str, int]:
    """Count the instances' labels (an `error` cell makes its instance `error`)."""
    pre = {c.instance_id: r for c, r in cells.items() if c.arm == "pre"}
    counted: Counter[str] = Counter()
    for cell, result in cells.items():
        if cell.arm != "post":
            continue
        first = pre.get(cell.instance_id)
        if first is None or first.passed is None or result.passed is None:
            counted["error"] += 1
        else:
            counted[str(label(first.passed, result.passed))] += 1
    return dict(counted)


def main() -> int:
    """Serve the scripted models on loopback and run the sweep through the real command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="local")
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--repo-mirror", required=True)
    parser.add_argument("--store", type=Path, default=Path("/tmp/compact-bench-check.db"))
    parser.add_argument("--instance", action="append", default=[])
    parser.add_argument("--workers", default="1")
    parser.add_argument("--run", help="The run's name (default check-BACKEND). The scripted "
                                      "server's port is new each time, so a run cannot be "
                                      "extended by a later check: name another.")
    args = parser.parse_args()
    run = args.run or f"check-{args.backend}"
    summary = Script([{"content": f"{MARKER} The agent explored the repository."}],
                     model="summarizer")
    with ScriptedServer(summary, *agent_scripts("compact-bench", args.dataset)) as server:
        command = [str(Path(sys.executable).parent / "replay"), "backbone",
                   "--suite", "compact-bench",
                   "--dataset", args.dataset, "--repo-mirror", args.repo_mirror,
                   "--backend", args.backend, "--store", str(args.store),
                   "--workers", args.workers, "--run", run,
                   "--model", f"openai:summarizer@{server.base_url}",
                   "--agent-model", f"openai:agent@{server.base_url}"]
        for ident in args.instance:
            command += ["--instance", ident]
        started = time.monotonic()
        done = subprocess.run(command, env={**os.environ, "REPLAY_QUIET": "1"}, check=False)
        seconds = time.monotonic() - started
    cells = api.report(args.store, run).cells
    print(f"exit {done.returncode}; {len(cells)} cells; labels {labels(cells)}; "
          f"{seconds:.0f} s")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
