"""Run `replay study demo` with the local executor and on a Ray cluster; compare cell for cell.

A check of distribution, not a measurement: scripted models on loopback (`keeper` summarizes
well, `loser` loses the thread; the agent writes the gold files unless its context says LOST),
so every label is known before the run. Both runs use the same backend (default docker) and the
same scripted server; the Ray run's cells are then looked up in each node's scratch store (a
worker keeps its continuations in `<its REPLAY_HOME>/ray-node/replay.db`), which names the node
that ran each cell when the nodes were started with distinct REPLAY_HOMEs:

    REPLAY_HOME=/tmp/node_a ray start --head --port 6391 --num-cpus 1 --resources '{"node_a": 1}'
    REPLAY_HOME=/tmp/node_b ray start --address 127.0.0.1:6391 --num-cpus 1 \\
        --resources '{"node_b": 1}'
    .venv/bin/python scripts/study_ray_check.py --ray-address 127.0.0.1:6391 \\
        --node node_a=/tmp/node_a --node node_b=/tmp/node_b --folder /tmp/study-check

Prints each command's exit code (its output goes to `study.log` beside its store), every cell's
result in both runs and the node that ran it. Run it again with the same `--port` to resume both
runs (a cell that ended in a harness fault is run again).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from replay import api
from replay.api.blocks import Instance, Script, ScriptedServer, Store, commit_files
from replay.store import continuations

KEEPER, LOSER = "<summary>PLAN-OK: finish the repair</summary>", "<summary>LOST</summary>"


def call(name: str, **arguments: object) -> dict:
    return {"function": {"name": name, "arguments": arguments}}


def gold_files(instance: Instance, scratch: Path) -> dict[str, str]:
    """The files the gold patch changes, with their fixed contents."""
    repo = scratch / instance.instance_id
    commit_files(instance.repo_files, repo)
    subprocess.run(["git", "apply", "-"], input=instance.patch, text=True, cwd=repo, check=True)
    names = subprocess.run(["git", "diff", "--name-only"], cwd=repo, capture_output=True,
                           text=True, check=True).stdout.split()
    return {name: (repo / name).read_text() for name in names}


def scripts(scratch: Path) -> list[Script]:
    """The summarizers and the agent: LOST in context gives up, else the gold files."""
    found = [Script([{"content": KEEPER}], model="keeper"),
             Script([{"content": LOSER}], model="loser"),
             Script([{"content": "Lost.", "tool_calls": [call("finish", summary="no idea")]}],
                    model="agent", contains="LOST")]
    for instance in api.instances("demo"):
        writes = [call("write_file", path=f"/testbed/{name}", content=text)
                  for name, text in gold_files(instance, scratch).items()]
        first = instance.problem_statement.strip().splitlines()[0][:60]
        found.append(Script([{"content": "Fixing.", "tool_calls": [
            *writes, call("finish", summary="fixed")]}], model="agent", contains=first))
    return found


def study(url: str, store: Path, args: argparse.Namespace, executor: str) -> int:
    """Run the study through the real command; its exit code."""
    command = [str(Path(sys.executable).parent / "replay"), "study", "demo",
               "--agent-model", f"openai:agent@{url}", "--model", f"openai:keeper@{url}",
               "--model", f"openai:loser@{url}", "--summarizer", f"openai:keeper@{url}",
               "--prompts", "claude-code,codex", "--backend", args.backend, "--store", str(store),
               "--workers", str(args.workers), "--executor", executor]
    if executor == "ray":
        command += ["--ray-address", args.ray_address]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    (store.parent / "study.log").write_text(done.stdout + done.stderr)
    return done.returncode


def node_of(key: str | None, nodes: dict[str, Path]) -> str:
    """The node whose scratch store holds continuation `key`."""
    for name, home in nodes.items():
        path = home / "ray-node" / "replay.db"
        if key and path.is_file():
            with Store.open_read_only(path) as store:
                if continuations.find(store, key) is not None:
                    return name
    return "?"


def compare(stores: dict[str, Path], nodes: dict[str, Path]) -> bool:
    """Print every cell's result in both runs and the node that ran it; whether all agree."""
    same = True
    for run in ("study-demo-backbones", "study-demo-prompts"):
        local, ray = (api.report(stores[name], run) for name in ("local", "ray"))
        print(f"run {run}")
        for cell in sorted(ray.cells):
            mine, theirs = local.cells.get(cell), ray.cells[cell]
            agree = mine is not None and (mine.status, mine.passed) == (theirs.status,
                                                                         theirs.passed)
            same &= agree
            print(f"  {str(cell):<70} local {mine and mine.passed!s:<5} ray {theirs.passed!s:<5}"
                  f" {'same' if agree else 'DIFFERS'}  node {node_of(theirs.continuation, nodes)}")
        labels = [{pair: o.label + (f" {o.confirmation}" if o.confirmation else "")
                   for pair, o in found.outcomes.items()} for found in (local, ray)]
        same &= labels[0] == labels[1] and len(local.cells) == len(ray.cells)
        print(f"  labels equal: {labels[0] == labels[1]}; cells {len(local.cells)} local, "
              f"{len(ray.cells)} ray")
    return same


def main() -> int:
    """Serve the scripted models, run both studies, compare them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ray-address", required=True)
    parser.add_argument("--node", action="append", default=[], help="NAME=REPLAY_HOME")
    parser.add_argument("--backend", default="docker")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0,
                        help="The scripted server's port (default a free one); the same port "
                             "resumes the runs of an earlier check (their models name it)")
    args = parser.parse_args()
    nodes = {name: Path(home) for name, _, home in (n.partition("=") for n in args.node)}
    stores = {name: args.folder / name / "replay.db" for name in ("local", "ray")}
    with tempfile.TemporaryDirectory() as scratch:
        server = ScriptedServer(*scripts(Path(scratch)), port=args.port)
        with server:
            for executor, store in stores.items():
                print(f"replay study demo --executor {executor}: exit "
                      f"{study(server.base_url, store, args, executor)}")
    return 0 if compare(stores, nodes) else 1


if __name__ == "__main__":
    sys.exit(main())
