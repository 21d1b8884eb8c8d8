"""Build the compact-bench suite (instances/compact-bench/) by its written rule.

The rule (also in the suite's suite.toml and SELECTION.md):

1. The nine public instances of the study come first.
2. Then SWE-bench Verified rows, taking turns across repositories in alphabetical order, each
   repository's rows in the order of sha256(instance id) (a fixed shuffle, not a preference),
   keeping a row only when all of these hold:
   a. its gold patch changes exactly one file, and not a test file;
   b. it has at most 10 FAIL_TO_PASS tests;
   c. its repository has a recipe here and a bare mirror that can be fetched here;
   d. the trajectory source (mini-swe-agent 1.15.0 with Gemini 3 Pro Preview, published in
      gruckion/mini-swe-agent) holds its trajectory;
   e. the trajectory's `before-edit` boundary keeps at least 3 steps;
   f. `replay validate` passes offline on the local backend with that boundary's snapshot.
3. At most 5 rows per repository; stop at 35.

Every kept row ships the history cut at `before-edit` (history.json + snapshot.diff) with its
provenance: source repository, path, commit, sha256 of the trajectory file, model, license.
Rows considered and set aside are listed in SELECTION.md with the reason.

    .venv/bin/python scripts/build_compact_bench.py --source SOURCE_MIRROR \\
        --dataset ../shared/swebench/SWE-bench_Verified.test.jsonl --repo-mirror MIRRORS

SOURCE_MIRROR is a bare clone of gruckion/mini-swe-agent (the `fetch` tool brings one); MIRRORS
the folder of the SWE-bench repositories' bare mirrors. The work is kept in a store
(`--store`, default a folder under /tmp), so an interrupted build resumes where it stopped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from compact_bench_files import write_selection, write_suite

from replay.api.blocks import (
    DIFF_FILE,
    HISTORY_FILE,
    HarnessError,
    History,
    InputError,
    Instance,
    Store,
    find_mirror,
    history_record,
    import_files,
    is_test_path,
    load_dataset,
    load_recipe,
    open_backend,
    parse_rule,
    validate_instance,
)

SUITE = Path(__file__).resolve().parent.parent / "instances" / "compact-bench"
STUDY = ["psf__requests-5414", "pytest-dev__pytest-7571", "pytest-dev__pytest-10081",
         "pytest-dev__pytest-7521", "pytest-dev__pytest-10051", "pytest-dev__pytest-7236",
         "sphinx-doc__sphinx-9230", "sympy__sympy-13551", "pydata__xarray-6721"]
SOURCE = {"repository": "gruckion/mini-swe-agent",
          "commit": "d12a71affd95403b036b2bdbd827349b77bfffb9",
          "folder": "swebench_results/20251118_gemini-3-pro-74pct",
          "model": "google/gemini-3-pro-preview", "agent": "mini-swe-agent 1.15.0",
          "license": "MIT"}
RULE = "before-edit"
MIN_STEPS = 3
MAX_F2P = 10
PER_REPO = 5
TOTAL = 35


@dataclass
class Outcome:
    """What the rule decided for one considered row."""

    instance_id: str
    kept: bool
    reason: str
    history: History | None = None
    provenance: dict[str, str] = field(default_factory=dict)


def changed_files(patch: str) -> list[str]:
    """The files a unified diff changes."""
    return re.findall(r"^diff --git a/(\S+)", patch, re.M)


def static_reason(row: Instance) -> str:
    """Why the rule's conditions a and b reject a row, or '' when they do not."""
    files = changed_files(row.patch)
    if len(files) != 1:
        return f"gold patch changes {len(files)} files"
    if is_test_path(files[0]):
        return f"gold patch changes a test file ({files[0]})"
    if len(row.FAIL_TO_PASS) > MAX_F2P:
        return f"{len(row.FAIL_TO_PASS)} FAIL_TO_PASS tests (over {MAX_F2P})"
    return ""


def shuffle_key(instance_id: str) -> str:
    """The fixed order of a repository's rows: sha256 of the instance id."""
    return hashlib.sha256(instance_id.encode()).hexdigest()


def turns(rows: list[Instance]) -> Iterator[Instance]:
    """Study instances first, then repositories taking turns (alphabetical), rows shuffled."""
    by_id = {row.instance_id: row for row in rows}
    yield from (by_id[ident] for ident in STUDY)
    queues: dict[str, list[Instance]] = {}
    for row in sorted(rows, key=lambda r: shuffle_key(r.instance_id)):
        if row.instance_id not in STUDY:
            queues.setdefault(row.repo, []).append(row)
    while any(queues.values()):
        for repo in sorted(queues):
            if queues[repo]:
                yield queues[repo].pop(0)


class Source:
    """The trajectory files of the published run, read from a bare clone at the fixed commit."""

    def __init__(self, mirror: Path, scratch: Path) -> None:
        self.mirror = mirror
        self.scratch = scratch
        listing = self._git("ls-tree", "-r", "--name-only", SOURCE["commit"],
                            f"{SOURCE['folder']}/trajs").decode()
        self.paths = {path.split("/")[-2]: path for path in listing.split()}
        summary = json.loads(self._git("show", f"{SOURCE['commit']}:{SOURCE['folder']}/"
                                               "results_summary.json"))
        self.resolved = {item["instance_id"]: item["resolved"] for item in summary["instances"]}

    def _git(self, *args: str) -> bytes:
        return subprocess.run(["git", "-C", str(self.mirror), *args], check=True,
                              capture_output=True).stdout

    def file(self, instance_id: str) -> tuple[Path, dict[str, str]]:
        """The trajectory written to the scratch folder, with its provenance."""
        path = self.paths[instance_id]
        data = self._git("show", f"{SOURCE['commit']}:{path}")
        local = self.scratch / f"{instance_id}.traj.json"
        local.write_bytes(data)
        provenance = {"repository": SOURCE["repository"], "commit": SOURCE["commit"],
                      "path": path, "sha256": hashlib.sha256(data).hexdigest(),
                      "model": SOURCE["model"], "agent": SOURCE["agent"],
                      "license": SOURCE["license"]}
        return local, provenance


def consider(row: Instance, source: Source, backend: object, store: Store,
             mirrors: Path) -> Outcome:
    """Apply conditions a-f to one row (the cheap ones first)."""
    ident = row.instance_id
    reason = "" if ident in STUDY else static_reason(row)
    if not reason:
        reason = _environment_reason(row, mirrors)
    if not reason and ident not in source.paths:
        reason = "no trajectory in the source"
    if reason:
        return Outcome(ident, False, reason)
    path, provenance = source.file(ident)
    try:
        imported, _ = import_files([path], [parse_rule(RULE)], [row], backend, store)
    except (InputError, HarnessError) as exc:
        return Outcome(ident, False, f"import refused: {exc}".splitlines()[0])
    history = imported[0].histories[0]
    steps = history.boundary.step
    if steps < MIN_STEPS:
        return Outcome(ident, False, f"before-edit keeps {steps} step(s) (under {MIN_STEPS})")
    validation = validate_instance(row, backend, store, boundary=history.snapshot)
    if validation.status != "valid":
        return Outcome(ident, False, f"validate: {validation.status}: "
                                     f"{'; '.join(validation.reasons)}"[:300])
    history = history.model_copy(update={"resolved": source.resolved.get(ident)})
    return Outcome(ident, True, f"kept: before-edit at step {steps}", history, provenance)


def _environment_reason(row: Instance, mirrors: Path) -> str:
    if find_mirror(mirrors, row.repo) is None:
        return f"no mirror of {row.repo} here"
    try:
        load_recipe(row)
    except InputError as exc:
        return f"no recipe: {exc}"
    return ""


def write_history(outcome: Outcome) -> None:
    """Write a kept row's history.json (with provenance) and snapshot.diff into the suite."""
    assert outcome.history is not None
    folder = SUITE / outcome.instance_id
    folder.mkdir(parents=True, exist_ok=True)
    record = history_record(outcome.history)
    record["provenance"] = outcome.provenance
    (folder / DIFF_FILE).write_bytes(outcome.history.snapshot.diff)
    (folder / HISTORY_FILE).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n",
                                       encoding="utf-8")


class Decisions:
    """The decisions taken so far, one JSON file per row under the work folder, so that
    repositories can be decided by parallel processes (`--repo`) and the build resumes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "decisions"
        self.folder.mkdir(parents=True, exist_ok=True)

    def get(self, instance_id: str) -> tuple[bool, str] | None:
        path = self.folder / f"{instance_id}.json"
        if not path.is_file():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        return data["kept"], data["reason"]

    def put(self, outcome: Outcome) -> None:
        if outcome.kept:
            write_history(outcome)
        text = json.dumps({"kept": outcome.kept, "reason": outcome.reason})
        (self.folder / f"{outcome.instance_id}.json").write_text(text, encoding="utf-8")


def build(rows: list[Instance], source: Source, store: Store, mirrors: Path,
          decisions: Decisions, repo: str | None = None) -> list[tuple[str, bool, str]]:
    """Walk the rows in the rule's order until 35 are kept (only `repo`'s rows, with it),
    deciding each row not decided yet; print and return every decision."""
    walked: list[tuple[str, bool, str]] = []
    per_repo: dict[str, int] = {}
    with open_backend("local", mirrors) as backend:
        for row in turns(rows):
            if repo is not None and row.repo != repo:
                continue
            if sum(kept for _, kept, _ in walked) >= TOTAL:
                break
            if per_repo.get(row.repo, 0) >= PER_REPO:
                continue
            decided = decisions.get(row.instance_id)
            if decided is None:
                outcome = consider(row, source, backend, store, mirrors)
                decisions.put(outcome)
                decided = outcome.kept, outcome.reason
                print(f"{'kept' if decided[0] else 'skip':5} {row.instance_id}: {decided[1]}",
                      flush=True)
            walked.append((row.instance_id, *decided))
            if decided[0]:
                per_repo[row.repo] = per_repo.get(row.repo, 0) + 1
    return walked


def main() -> int:
    """Build the suite; the list and the reasons go to suite.toml and SELECTION.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--repo-mirror", type=Path, required=True)
    parser.add_argument("--store", type=Path, default=Path("/tmp/replay-compact-bench"))
    parser.add_argument("--repo", help="Decide only this repository's rows (run several "
                                       "at once), without writing the suite's list.")
    args = parser.parse_args()
    args.store.mkdir(parents=True, exist_ok=True)
    rows = load_dataset(args.dataset)
    decisions = Decisions(args.store)
    with Store.open(args.store / "replay.db") as store:
        source = Source(args.source, args.store)
        walked = build(rows, source, store, args.repo_mirror, decisions, args.repo)
    if args.repo is None:
        kept = [ident for ident, is_kept, _ in walked if is_kept]
        for folder in SUITE.iterdir():
            if folder.is_dir() and folder.name not in kept:
                shutil.rmtree(folder)
        write_suite(SUITE, kept)
        write_selection(SUITE, walked, SOURCE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
