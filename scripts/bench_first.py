"""Time the README's first command's job (`replay backbone`, after `bash scripts/setup.sh`).

    python scripts/bench_first.py [--runs 3] [ARGS...]

Each run is the command as a user types it, in a scratch store (so every cell runs and every
model call is made; environments and the widened model stay where replay keeps them, as after
a first run). It prints, for each run and as the median over the runs: the wall time and exit
code, the CPU seconds the command and its children used, and the share of the wall time spent
in model calls (the seconds the store records for each call; the target is at least 80%: the
rest is model load, environments, tests and the engine). ARGS are passed on to the command.
Say how busy the machine was: the load average is printed before and after each run; on a
busy machine the CPU seconds tell more than the wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from replay.api.blocks import Store, all_cells, seconds_total

TARGET_SECONDS = 300  # the bound for the first command on two cores
TARGET_SHARE = 0.8


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(args: list[str]) -> dict[str, float]:
    """Run the command once in a scratch store; its wall, CPU and model seconds, cells, exit."""
    store = Path(tempfile.mkdtemp(prefix="bench-first-")) / "replay.db"
    load = os.getloadavg()[0]
    cpu, started = _children_cpu(), time.monotonic()
    done = subprocess.run([sys.executable, "-m", "replay", "backbone", "--store", str(store),
                           *args], capture_output=True, text=True)
    wall, cpu = time.monotonic() - started, _children_cpu() - cpu
    if done.returncode != 0:
        print(done.stdout[-2000:] + done.stderr[-2000:], file=sys.stderr)
    with Store.open_read_only(store) as opened:
        model, calls = seconds_total(opened)
        cells = [cell.seconds for cell in all_cells(opened)]
    return {"exit": done.returncode, "wall": wall, "cpu": cpu, "model": model, "calls": calls,
            "cells": len(cells), "cell_seconds": sum(cells), "load_before": load,
            "load_after": os.getloadavg()[0]}


def line(run: dict[str, float]) -> str:
    """One run (or the medians) as one line."""
    return (f"exit {run['exit']:.0f}, {run['wall']:.0f} s wall, {run['cpu']:.0f} s CPU, "
            f"{run['cells']:.0f} cells ({run['cell_seconds']:.0f} s), {run['calls']:.0f} model "
            f"calls {run['model']:.0f} s = {100 * run['model'] / max(run['wall'], 1e-9):.0f}% of "
            f"the wall time; load {run['load_before']:.1f} -> {run['load_after']:.1f} on "
            f"{os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    known, rest = parser.parse_known_args()
    runs = []
    for number in range(1, known.runs + 1):
        runs.append(one_run(rest))
        print(f"run {number}: {line(runs[-1])}", flush=True)
    median = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
    print(f"median of {len(runs)}: {line(median)}")
    share = median["model"] / max(median["wall"], 1e-9)
    fast, spent = median["wall"] <= TARGET_SECONDS, share >= TARGET_SHARE
    print(f"target: at most {TARGET_SECONDS} s ({'met' if fast else 'missed'}), model share at "
          f"least {TARGET_SHARE:.0%} ({'met' if spent else 'missed'})")
    sys.exit(0 if all(run["exit"] == 0 for run in runs) else 1)


if __name__ == "__main__":
    main()
