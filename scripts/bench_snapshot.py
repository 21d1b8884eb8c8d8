"""Time snapshot restore against building an environment from nothing, on a real repository.

    python scripts/bench_snapshot.py --repo-mirror DIR [--instance pytest-dev__pytest-7571]

Prints the median restore time of a snapshot (gold patch applied plus an untracked file) over
--restores runs, the median time to build the instance's environment from nothing over --builds
runs (clone at the base commit, venv, pins, install), and their ratio. Needs a bare mirror of the
instance's repository under DIR and PyPI access for the builds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_timing import fixed_snapshot, restore_seconds

REPO_ROOT = Path(__file__).resolve().parent.parent
DATASET = REPO_ROOT.parent / "shared" / "swebench" / "SWE-bench_Verified.test.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo-mirror", type=Path, required=True)
    parser.add_argument("--dataset", default=str(DATASET))
    parser.add_argument("--instance", default="pytest-dev__pytest-7571")
    parser.add_argument("--restores", type=int, default=20)
    parser.add_argument("--builds", type=int, default=3)
    args = parser.parse_args()

    from replay.api.blocks import LocalBackend, load_dataset, load_recipe, select

    instance = select(load_dataset(args.dataset), ids=[args.instance])[0]
    recipe = load_recipe(instance)
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as scratch:
        backend = LocalBackend(root=Path(scratch), mirrors=args.repo_mirror)
        builds = []
        for _ in range(args.builds):
            start = time.perf_counter()
            env = backend.start(instance, recipe, rebuild=True)
            builds.append(time.perf_counter() - start)
        snapshot = fixed_snapshot(env, instance)
        tracked = env.exec("git ls-files | wc -l").output.strip()
        restores = restore_seconds(env, snapshot, args.restores,
                                   "echo edit >> README.rst && rm -f reproduce_bug.py")

    restore = statistics.median(restores)
    build = statistics.median(builds)
    print(f"instance            {instance.instance_id} ({tracked} tracked files, "
          f"diff {len(snapshot.diff)} bytes)")
    print(f"restore snapshot    median {restore * 1000:.0f} ms over {len(restores)} runs "
          f"(min {min(restores) * 1000:.0f}, max {max(restores) * 1000:.0f})")
    print(f"build environment   median {build:.1f} s over {len(builds)} runs "
          f"(min {min(builds):.1f}, max {max(builds):.1f})")
    print(f"ratio               build / restore = {build / restore:.0f}x")
    print(f"restore under 0.5 s {'yes' if restore < 0.5 else 'NO'}")
    return 0 if restore < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
