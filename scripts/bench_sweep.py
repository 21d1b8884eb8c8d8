"""Benchmark of a backbone sweep: continuations run against the naive count, and the speed-up of
four workers over one when every model call takes a second.

A backbone sweep over K summarizers on N instances runs PRE once per instance and POST once per
pair: N x (1 + K) continuations, where running PRE beside every POST would take 2 x N x K. Each
model (K summarizers and the agent) is a scripted model on 127.0.0.1 that answers after `--delay`
seconds; the agent reads a file at every step until its step limit (`--steps`). Environments are
built and slots 0-3 copied before anything is timed, the grader's imports are loaded, and each
timed run validates its instances first, untimed, in a fresh store; the sweep runs through
`replay.api`, as a user's script would run it.

    .venv/bin/python scripts/bench_sweep.py [--instances 3] [--summarizers 4] [--delay 1.0]
                                            [--steps 3]

Exits 1 when a figure misses its target (continuations = N x (1 + K), speed-up >= 3).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path

from replay import api
from replay.api.blocks import PromptText, Script, ScriptedServer, environment

PROMPT = PromptText(name="claude-code", agent="bench", registry="npm", package="bench",
                    version="0", digest="sha512-bench",
                    parts={"user": "Summarize the conversation in <summary> tags."},
                    synced_at="2026-01-01T00:00:00Z")
READ = {"function": {"name": "read_file", "arguments": {"path": "/testbed/README.md"}}}


def scripts(summarizers: int, delay: float) -> list[Script]:
    """Slow summarizers (a distinct summary each) and a slow agent that reads at every step."""
    found = [Script([{"fault": "slow", "seconds": delay,
                      "content": f"<summary>Work so far, as summ-{index} saw it.</summary>"}],
                    model=f"summ-{index}") for index in range(summarizers)]
    found.append(Script([{"fault": "slow", "seconds": delay, "content": "Reading.",
                          "tool_calls": [READ]}], model="agent"))
    return found


class Clock(api.Silent):
    """A silent listener that notes when the cells start running (the plan is loaded, the
    executor made): the time of a sweep is from then on."""

    started = 0.0

    def cells(self, todo: int, workers: int) -> AbstractContextManager[api.Progress]:
        """Start the clock."""
        self.started = time.monotonic()
        return super().cells(todo, workers)


def sweep(plan: api.Plan, workers: int, folder: Path) -> tuple[api.SweepOutcome, float]:
    """Run the plan in a fresh store with `workers` workers, its instances validated first
    (untimed); what came of it and the seconds its cells took."""
    path = folder / f"workers-{workers}" / "replay.db"
    api.validate(api.instances(plan.suite, ids=plan.instances), path)
    options = api.SweepOptions(path, workers=workers, prompts=lambda name: PROMPT)
    clock = Clock()
    outcome = api.sweep(plan, options, run="bench", listener=clock)
    return outcome, time.monotonic() - clock.started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=3, help="N, from the demo suite")
    parser.add_argument("--summarizers", type=int, default=4, help="K")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds per model call")
    parser.add_argument("--steps", type=int, default=3, help="the agent's step limit")
    args = parser.parse_args()
    import swebench.harness.grading  # noqa: F401 - the grader's first import is not timed
    instances = api.instances("demo")[:args.instances]
    n, k = len(instances), args.summarizers
    for instance in instances:
        for slot in range(4):
            environment(instance, slot=slot)
    with ScriptedServer(*scripts(k, args.delay)) as server, \
            tempfile.TemporaryDirectory(prefix="bench-sweep-") as folder:
        plan = api.plan("backbone", [f"openai:summ-{index}@{server.base_url}:claude-code"
                                     for index in range(k)],
                        f"openai:agent@{server.base_url}", steps=args.steps,
                        ids=[i.instance_id for i in instances])
        done_one, one_seconds = sweep(plan, 1, Path(folder))
        done_four, four_seconds = sweep(plan, 4, Path(folder))
    one, four = done_one.result, done_four.result
    errors = len(one.errors) + len(four.errors)
    speedup = one_seconds / four_seconds
    continuations_ok = one.ran == four.ran == n * (1 + k)
    print(f"backbone sweep: N={n} instances, K={k} summarizers, model calls take "
          f"{args.delay:.1f} s, agent steps {args.steps}")
    print(f"continuations run: {one.ran} (N x (1 + K) = {n * (1 + k)}; "
          f"naive 2 x N x K = {2 * n * k})  {'ok' if continuations_ok else 'MISSED'}")
    print(f"--workers 1: {one_seconds:.1f} s   --workers 4: {four_seconds:.1f} s   "
          f"speed-up {speedup:.2f}x (target >= 3)  {'ok' if speedup >= 3 else 'MISSED'}")
    if errors:
        print(f"{errors} cell(s) ended in an error")
    return 0 if continuations_ok and speedup >= 3 and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
