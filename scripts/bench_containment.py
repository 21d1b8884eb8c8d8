"""The cost of containment per command: the local backend's sandboxed exec against plain bash.

    python scripts/bench_containment.py [--runs 30]

Starts the demo suite's first instance on the local backend (in a scratch REPLAY_HOME) and runs
`true` through `LocalEnvironment.exec` (bubblewrap in its namespaces, see
replay/environments/sandbox.py) and through a plain `bash -c` in the same tree, alternating, in
the same process. Prints the median (and min / max) of each and the difference; the contained
median must stay under 50 ms more than plain bash.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

LIMIT_MS = 50.0


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as scratch:
        os.environ["REPLAY_HOME"] = scratch
        from replay import api
        from replay.api.blocks import LocalBackend, load_recipe

        instance = api.instances("demo")[0]
        backend = LocalBackend()
        env = backend.start(instance, load_recipe(instance))
        try:
            env.exec("true")  # warm: the sandbox check and file caches
            contained, plain = [], []
            for _ in range(args.runs):
                contained.append(_timed(lambda: env.exec("true")))
                plain.append(_timed(lambda: subprocess.run(
                    ["bash", "-c", "true"], cwd=env.build / "tree", check=True)))
        finally:
            backend.close()
    median_contained, median_plain = statistics.median(contained), statistics.median(plain)
    print(f"runs {args.runs} each, alternating")
    print(f"  contained exec  median {median_contained:6.2f} ms  (min {min(contained):.2f}, "
          f"max {max(contained):.2f})")
    print(f"  plain bash -c   median {median_plain:6.2f} ms  (min {min(plain):.2f}, "
          f"max {max(plain):.2f})")
    cost = median_contained - median_plain
    ratio = median_contained / median_plain
    print(f"  containment costs {cost:.2f} ms per command (ratio {ratio:.1f}x); "
          f"limit {LIMIT_MS:.0f} ms")
    return 0 if cost < LIMIT_MS else 1


if __name__ == "__main__":
    sys.exit(main())
