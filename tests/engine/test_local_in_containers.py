"""The local backend works from inside a container: any non-initial mount namespace, whichever
CPU made it and whichever runs the engine.

On kernels that hand out mount namespace ids per CPU (seen on 6.18), binding a namespace's file
from a non-initial mount namespace fails when the new namespace's id is not above the caller's:
keeping a cell's namespaces that way failed `replay validate` for one of the four CPU pairs of a
2-core machine (the container's namespace made on CPU 1, the engine on CPU 0). A holder process
keeps them now (replay/environments/holders.py); this runs the demo suite's validation for every
pair of the first two CPUs.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPLAY

CPUS = sorted(os.sched_getaffinity(0))[:2]


@pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs: the failure depended on which CPU "
                                          "made the container's namespace and which the cell's")
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("taskset") is None,
                    reason="needs root (unshare -m) and taskset")
@pytest.mark.parametrize(("outer", "engine"), list(itertools.product(CPUS, repeat=2)))
def test_validation_runs_in_a_private_mount_namespace_made_on_any_cpu(
        outer: int, engine: int, tmp_path: Path) -> None:
    argv = ["taskset", "-c", str(outer), "unshare", "-m", "--propagation", "private", "--",
            "taskset", "-c", str(engine), *REPLAY, "validate", "--suite", "demo",
            "--store", str(tmp_path / "replay.db")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "harness fault" not in done.stdout + done.stderr
