"""Time the docker backend: snapshot restore and one command in a warm container, image builds.

    python scripts/bench_docker.py [--instance ID] [--dataset FILE --repo-mirror DIR]

Prints the median time to restore a snapshot (gold patch applied plus an untracked file) in a
warm container over --restores runs, the median time of one command (`true`) over --commands
runs, the time to build the instance's environment image (venv + packages) once, and the time
to create a warm container. Defaults to a demo instance; a real one needs --dataset and
--repo-mirror. Needs a running engine and the base image (scripts/docker-engine.sh,
scripts/build-base-image.sh) and PyPI access for the build. Exit 1 when restore takes 1 s or more.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench_timing import fixed_snapshot, restore_seconds, seconds

LIMIT = 1.0


def _median_ms(samples: list[float]) -> str:
    return (f"median {statistics.median(samples) * 1000:.0f} ms over {len(samples)} runs "
            f"(min {min(samples) * 1000:.0f}, max {max(samples) * 1000:.0f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="replay-demo__tally-1")
    parser.add_argument("--suite", default="demo")
    parser.add_argument("--dataset", default=None)
    parser.add_argument("--repo-mirror", default=None)
    parser.add_argument("--restores", type=int, default=20)
    parser.add_argument("--commands", type=int, default=50)
    args = parser.parse_args()

    from pathlib import Path

    from replay import api
    from replay.api.blocks import DockerBackend, load_recipe

    instance = api.instances(args.suite, args.dataset, [args.instance])[0]
    recipe = load_recipe(instance)
    mirrors = Path(args.repo_mirror) if args.repo_mirror else None
    with DockerBackend(mirrors=mirrors) as backend:
        start = time.perf_counter()
        backend.images.environment_image(recipe, rebuild=True)
        build = time.perf_counter() - start
        backend.start(instance, recipe).close()
        start = time.perf_counter()
        env = backend.start(instance, recipe)
        create = time.perf_counter() - start
        snapshot = fixed_snapshot(env, instance)
        restores = restore_seconds(env, snapshot, args.restores,
                                   "echo edit >> README.md; rm -f reproduce_bug.py")
        commands = seconds(lambda: env.exec("true"), args.commands)

    restore = statistics.median(restores)
    print(f"instance            {instance.instance_id} (diff {len(snapshot.diff)} bytes)")
    print(f"restore snapshot    {_median_ms(restores)}")
    print(f"run one command     {_median_ms(commands)}")
    print(f"build env image     {build:.1f} s once (python {recipe.python}, "
          f"{len(recipe.packages)} package(s))")
    print(f"create container    {create:.1f} s (volumes filled from the image)")
    print(f"restore under {LIMIT:.0f} s   {'yes' if restore < LIMIT else 'NO'}")
    return 0 if restore < LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
