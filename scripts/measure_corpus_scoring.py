"""Measure what scoring a collected corpus costs: the wall time of scoring every complete session
afresh (records written to a temporary folder, the corpus's own `.scores/` untouched), and the
peak resident memory of a process scoring the largest session alone.

    .venv/bin/python scripts/measure_corpus_scoring.py CORPUS [--workers 2]

Targets (issue 35): the whole corpus under 10 minutes, the largest session under 2 GB.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

from replay.corpus.manifest import read_manifest
from replay.corpus.scoring import jobs, score_corpus, score_file
from replay.measures.retention import Limits


def _largest(path: str) -> None:
    score_file(Path(path), Limits())


def main() -> int:
    """Print the two measurements and whether they meet their targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    todo = jobs(options.corpus, read_manifest(options.corpus), Limits())
    largest = max(todo, key=lambda job: job.entry.size)
    child = get_context("spawn").Process(target=_largest, args=(str(largest.path),))
    child.start()
    child.join()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB -> MiB (Linux)
    with tempfile.TemporaryDirectory() as scratch:
        fresh = [replace(job, record=Path(scratch) / ".scores" / job.record.name)
                 for job in todo]
        start = time.monotonic()
        scored = sum(1 for _ in score_corpus(fresh, Limits(), options.workers, lambda: None))
        seconds = time.monotonic() - start
    print(f"scored {scored} session(s) in {seconds:.0f} s with {options.workers} worker(s) "
          f"({'under' if seconds < 600 else 'OVER'} the 10-minute target)")
    print(f"largest session {largest.entry.file} ({largest.entry.size / 2**20:.1f} MiB): peak "
          f"resident memory {peak:.0f} MiB ({'under' if peak < 2048 else 'OVER'} 2 GB)")
    return 0 if seconds < 600 and peak < 2048 else 1


if __name__ == "__main__":
    sys.exit(main())
