"""Time what starting every cell from the validated state costs, per backend.

    python scripts/bench_reset.py [--backend local --backend docker] [--runs 15]
    python scripts/bench_reset.py --dataset FILE --instance pytest-dev__pytest-7571 \
        --repo-mirror DIR

Per backend, the median over --runs of: `reset` alone (local: a new empty cell layer; docker: a
new container from the image), `restore` of a snapshot (reset, the diff applied, the fingerprint
checked) and `settle` (the tree captured and restored before the tests: what each graded
continuation now pays once more), against one plain command (`true`) in the same environment,
as the baseline the ratios use. Default instance: the demo suite's tally-1 (no network); a real
SWE-bench row needs its dataset file and a mirror of its repository.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from typing import Any

from bench_timing import UNTRACKED, fixed_snapshot, seconds


def median_ms(action: Callable[[], object], runs: int) -> tuple[float, float, float]:
    """Median, minimum and maximum milliseconds of `action` over `runs` runs."""
    times = [1000 * each for each in seconds(action, runs)]
    return statistics.median(times), min(times), max(times)


def bench(env: Any, instance: Any, runs: int) -> dict[str, tuple[float, float, float]]:
    """The figures of one environment (see the module docstring)."""
    from replay.api.blocks import snapshots

    snapshot = fixed_snapshot(env, instance, f"{UNTRACKED} && mkdir -p __pycache__ && "
                                             "echo x > __pycache__/ignored.pyc")

    def dirty_restore() -> None:
        env.exec("echo edit >> README.md; touch .git/hooks/post-checkout")
        env.restore(snapshot)

    return {"command (true)": median_ms(lambda: env.exec("true"), runs),
            "reset": median_ms(env.reset, runs),
            "restore": median_ms(lambda: env.restore(snapshot), runs),
            "dirty command + restore": median_ms(dirty_restore, runs),
            "settle": median_ms(lambda: snapshots.settle(env, instance.base_commit), runs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", choices=["local", "docker"])
    parser.add_argument("--dataset")
    parser.add_argument("--instance", default="replay-demo__tally-1")
    parser.add_argument("--repo-mirror")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    from pathlib import Path

    from replay import api
    from replay.api.blocks import load_recipe, make_backend

    instance = api.instances("demo", args.dataset, [args.instance])[0]
    mirrors = Path(args.repo_mirror) if args.repo_mirror else None
    recipe = load_recipe(instance, mirrors=mirrors)
    worst = 0.0
    for name in args.backend or ["local"]:
        backend = make_backend(name, mirrors)
        try:
            env = backend.start(instance, recipe)
            figures = bench(env, instance, args.runs)
            tracked = env.exec("git ls-files | wc -l").output.strip()
        finally:
            backend.close()
        baseline = figures["command (true)"][0]
        print(f"{name}: {instance.instance_id} ({tracked} tracked files), {args.runs} runs each")
        for label, (median, low, high) in figures.items():
            print(f"  {label:24} median {median:7.1f} ms (min {low:.1f}, max {high:.1f})"
                  f"  {median / baseline:5.1f}x a command")
        worst = max(worst, figures["restore"][0], figures["settle"][0])
    print(f"restore and settle under 1 s: {'yes' if worst < 1000 else 'NO'}")
    return 0 if worst < 1000 else 1


if __name__ == "__main__":
    sys.exit(main())
