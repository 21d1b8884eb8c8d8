"""Benchmark of a backbone sweep: continuations run against the naive count, and the speed-up of
four workers over one when every model call takes a second.

A backbone sweep over K summarizers on N instances runs PRE once per instance and POST once per
pair: N x (1 + K) continuations, where running PRE beside every POST would take 2 x N x K. Each
model (K summarizers and the agent) is a scripted model on 127.0.0.1 that answers after `--delay`
seconds; the agent reads a file at every step until its step limit (`--steps`). Environments are
built and slots 0-3 copied before anything is timed, the grader's imports are loaded, and each
timed run validates its instances first, untimed, in a fresh store; the sweep runs through
`replay.api`, as a user's script would run it.

It also prints the engine's overhead per cell: everything a cell costs but its model calls and
its test runs (loading what the cell needs, the store's reads and writes, restoring snapshots,
running the agent's tool calls, driving the workers). It is measured on the `--workers 1`
sweeps, where cells run one after another, so their wall time is the sum of what each cell
took: (wall time of the timed sweep - the seconds of its model calls - the seconds of its test
runs) / cells. The model calls' seconds are what the store keeps of each call (the client's own
timing of the round trip to the scripted server, retries included); the test runs' seconds are
what the grader recorded of each graded continuation (`Grade.duration`). Both are measured
inside the same sweep, so nothing is subtracted that did not happen. The `--workers 1` sweep
runs `--repeats` times, each in a fresh store, and the figure is their median.

    .venv/bin/python scripts/bench_sweep.py [--instances 3] [--summarizers 4] [--delay 1.0]
                                            [--steps 3] [--repeats 3]

Exits 1 when a figure misses its target (continuations = N x (1 + K), speed-up >= 3, engine
overhead <= 0.25 s a cell). At `--delay 0` there is no model wait for workers to overlap, so the
speed-up is shown but not held to its target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path

from replay import api
from replay.api.blocks import (
    PromptText,
    Script,
    ScriptedServer,
    Store,
    environment,
    kept_continuation,
    seconds_total,
)

PROMPT = PromptText(name="claude-code", agent="bench", registry="npm", package="bench",
                    version="0", digest="sha512-bench",
                    parts={"user": "Summarize the conversation in <summary> tags."},
                    synced_at="2026-01-01T00:00:00Z")
READ = {"function": {"name": "read_file", "arguments": {"path": "/testbed/README.md"}}}
OVERHEAD_TARGET = 0.25  # seconds a cell, at most


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
    """Run the plan in a fresh store (`folder`) with `workers` workers, its instances validated
    first (untimed); what came of it and the seconds its cells took."""
    path = folder / "replay.db"
    api.validate(api.instances(plan.suite, ids=plan.instances), path)
    options = api.RunOptions(path, workers=workers, prompts=lambda name: PROMPT)
    clock = Clock()
    outcome = api.sweep(plan, options, run="bench", listener=clock)
    return outcome, time.monotonic() - clock.started


def inside_seconds(folder: Path, outcome: api.SweepOutcome) -> tuple[float, float]:
    """The seconds the sweep kept in `folder` spent in model calls and in test runs."""
    with Store.open(folder / "replay.db") as store:
        calls, _ = seconds_total(store)
        tests = sum(found.grade.duration for result in outcome.result.results
                    if result.continuation and not result.reused
                    and (found := kept_continuation(store, result.continuation)) is not None)
    return calls, tests


def overhead(plan: api.Plan, folder: Path, repeats: int) -> tuple[float, list[str]]:
    """The median engine overhead per cell of `repeats` `--workers 1` sweeps, and a line on
    each (see the module docstring)."""
    figures, lines = [], []
    for index in range(repeats):
        where = folder / f"overhead-{index}"
        outcome, wall = sweep(plan, 1, where)
        calls, tests = inside_seconds(where, outcome)
        cells = len(outcome.result.results)
        figures.append((wall - calls - tests) / cells)
        lines.append(f"  run {index + 1}: {cells} cells in {wall:.2f} s, model calls "
                     f"{calls:.2f} s, test runs {tests:.2f} s: {figures[-1]:.3f} s a cell")
    return statistics.median(figures), lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=3, help="N, from the demo suite")
    parser.add_argument("--summarizers", type=int, default=4, help="K")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds per model call")
    parser.add_argument("--steps", type=int, default=3, help="the agent's step limit")
    parser.add_argument("--repeats", type=int, default=3,
                        help="--workers 1 sweeps the overhead is the median of")
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
        done_one, one_seconds = sweep(plan, 1, Path(folder) / "workers-1")
        done_four, four_seconds = sweep(plan, 4, Path(folder) / "workers-4")
        per_cell, lines = overhead(plan, Path(folder), args.repeats)
    one, four = done_one.result, done_four.result
    errors = len(one.errors) + len(four.errors)
    speedup = one_seconds / four_seconds
    continuations_ok = one.ran == four.ran == n * (1 + k)
    print(f"backbone sweep: N={n} instances, K={k} summarizers, model calls take "
          f"{args.delay:.1f} s, agent steps {args.steps}")
    print(f"continuations run: {one.ran} (N x (1 + K) = {n * (1 + k)}; "
          f"naive 2 x N x K = {2 * n * k})  {'ok' if continuations_ok else 'MISSED'}")
    speedup_ok = speedup >= 3 or not args.delay
    print(f"--workers 1: {one_seconds:.1f} s   --workers 4: {four_seconds:.1f} s   "
          f"speed-up {speedup:.2f}x (target >= 3)  "
          f"{'not held at --delay 0' if not args.delay else 'ok' if speedup_ok else 'MISSED'}")
    overhead_ok = per_cell <= OVERHEAD_TARGET
    print(f"engine overhead per cell (median of {args.repeats} --workers 1 sweeps): "
          f"{per_cell:.3f} s (target <= {OVERHEAD_TARGET})  {'ok' if overhead_ok else 'MISSED'}")
    print("\n".join(lines))
    if errors:
        print(f"{errors} cell(s) ended in an error")
    return 0 if continuations_ok and speedup_ok and overhead_ok and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
