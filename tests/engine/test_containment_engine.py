"""Escape tests through the engine itself: what the agent makes is never followed on the host.

The attacks of tests/engine/test_containment.py go through the agent's bash tool against the
sandbox; these go through the engine's own host-side work: the agent's read_file and write_file
tools on links it made, the judge writing its test patch and the snapshot capture on links planted
where they write, the interpreter prefix read from a venv file the agent edits, and `replay import`
re-executing a third-party trajectory that makes a link and writes through it. Each runs in a real
`replay run` (or `replay import`) subprocess that holds the model key, on both backends.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from replay.instances.records import load_suite
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from agent_scripts import call
from conftest import BACKENDS, FAKE_KEY, KEY_ENV, REPLAY, run_replay

TALLY = next(i for i in load_suite("demo").instances if i.instance_id == "replay-demo__tally-1")
HOST_TEXT = "host data that must stay on the host\n"


def _host_files(tmp_path: Path) -> dict[str, Path]:
    """Host files and a folder the attacks aim at, each with known content."""
    folder = tmp_path / "host"
    (folder / "bin").mkdir(parents=True)
    (folder / "empty").mkdir()
    files = {name: folder / name for name in ("secret", "patch-target", "diff-target")}
    for path in files.values():
        path.write_text(HOST_TEXT)
    (folder / "bin" / "python3").write_text(HOST_TEXT)  # a prefix a forged pyvenv.cfg names
    return {**files, "folder": folder, "empty": folder / "empty"}


def _turns(host: dict[str, Path]) -> list[dict]:
    """Plant links and a forged pyvenv.cfg, then use the agent's own file tools on them."""
    plant = (f"ln -s /proc/self/environ /testbed/envlink && "
             f"ln -s {host['secret']} /testbed/hostlink && "
             f"ln -s {host['empty']} /testbed/hostdir && "
             f"ln -sf {host['patch-target']} /testbed/.git/replay-test.patch && "
             f"ln -sf {host['diff-target']} /testbed/.git/replay-snapshot.diff && "
             f"sed -i 's|^home = .*|home = {host['folder']}/bin|' /opt/replay-venv/pyvenv.cfg && "
             "echo planted")
    return [
        {"content": "Planting.", "tool_calls": [call("bash", command=plant)]},
        {"content": "Reading.", "tool_calls": [
            call("read_file", path="/testbed/envlink"),
            call("read_file", path="/testbed/hostlink"),
            call("write_file", path="/testbed/hostdir/written-through-a-link", content="x"),
            call("edit_file", path="/testbed/hostlink", old="host data", new="agent data")]},
        {"content": "Looking.", "tool_calls": [call(
            "bash", command=f"cat {host['secret']} || echo no-host-file; "
                            f"ls {host['folder']} || echo no-host-folder")]},
        {"content": "Done.", "tool_calls": [call("finish", summary="nothing")]},
    ]


def _assert_host_untouched(host: dict[str, Path], tmp_path: Path) -> None:
    for name in ("secret", "patch-target", "diff-target"):
        assert host[name].read_text() == HOST_TEXT, name
    assert list(host["empty"].iterdir()) == []
    for artifact in tmp_path.rglob("*"):
        if artifact.is_file() and host["folder"] not in artifact.parents:
            data = artifact.read_bytes()
            assert FAKE_KEY.encode() not in data, artifact
            assert HOST_TEXT.encode() not in data, artifact


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_engine_follows_no_link_and_trusts_no_venv_file(backend: str,
                                                            tmp_path: Path) -> None:
    host = _host_files(tmp_path)
    store = tmp_path / "replay.db"
    with ScriptedServer(Script(_turns(host), model="agent")) as server:
        agent = f"openai:agent@{server.base_url}#{KEY_ENV}"
        done = subprocess.run(
            [*REPLAY, "cell", "--instance", TALLY.instance_id, "--arm", "pre", "--agent-model",
             agent, "--store", str(store), "--backend", backend],
            capture_output=True, text=True, timeout=600,
            env={**os.environ, KEY_ENV: FAKE_KEY, "COLUMNS": "200"})
    assert done.returncode == 1, done.stdout + done.stderr  # graded: its tests fail
    trace_line = next(line for line in done.stdout.splitlines()
                      if line.strip().startswith("trace "))
    trace = json.loads(Path(trace_line.split()[1]).read_text())
    outputs = [m["content"] for m in trace["messages"][trace["start_index"]:]
               if m.get("role") == "tool"]
    assert "planted" in outputs[0]
    assert FAKE_KEY not in outputs[1] and "PATH=" in outputs[1]  # the command's own environ
    assert HOST_TEXT not in "".join(outputs)
    assert "no-host-file" in outputs[-2] and "no-host-folder" in outputs[-2]
    _assert_host_untouched(host, tmp_path)


def _linking_trajectory(host: dict[str, Path]) -> dict:
    """An OpenAI-message trajectory whose actions make a link to a host folder and write
    through it with the write_file tool."""
    def step(number: int, name: str, arguments: dict, output: str) -> list[dict]:
        call_id = f"call_{number}"
        return [{"role": "assistant", "content": f"Step {number}.", "tool_calls": [
                    {"id": call_id, "type": "function",
                     "function": {"name": name, "arguments": json.dumps(arguments)}}]},
                {"role": "tool", "tool_call_id": call_id, "content": output}]
    return {"instance_id": TALLY.instance_id, "model": "third-party", "messages": [
        {"role": "system", "content": "You fix bugs in /testbed."},
        {"role": "user", "content": TALLY.problem_statement},
        *step(1, "bash", {"command": f"ln -s {host['empty']} /testbed/hostdir"},
              "exit code: 0\n"),
        *step(2, "write_file", {"path": "/testbed/hostdir/imported-through-a-link",
                                "content": "x"}, "wrote /testbed/hostdir/imported-through-a-link"),
        *step(3, "bash", {"command": "true"}, "exit code: 0\n"),
    ]}


def test_import_re_executes_a_trajectory_without_writing_through_its_links(
        tmp_path: Path) -> None:
    """`replay import` re-executes on the local backend (the one it uses)."""
    host = _host_files(tmp_path)
    trajectory = tmp_path / "linking.openai.json"
    trajectory.write_text(json.dumps(_linking_trajectory(host)))
    done = run_replay("import", str(trajectory), "--boundary", "steps:2", "--store",
                      str(tmp_path / "replay.db"))
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "imported-through-a-link" in done.stdout + done.stderr  # the write was tried
    assert list(host["empty"].iterdir()) == [], done.stdout + done.stderr
    _assert_host_untouched(host, tmp_path)
