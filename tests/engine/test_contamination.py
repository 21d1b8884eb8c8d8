"""What one cell leaves is never seen by another cell, another run or a validation.

Each vector is planted by a real agent (a scripted model on 127.0.0.1 driving the agent's own
bash tool) in one continuation, which shows in its own tool output that the plant is live. A
later continuation on the same backend (a later cell of the same sweep), a continuation on a new
backend (a later run) and a validation then grade the tiny instance exactly as a fresh home does:
the agent that applies the fix passes, and validation finds the instance valid. Before cells
started from the validated build, each of these made the later cell that applies the fix fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replay.environments import snapshots
from replay.environments.cgroups import Limits
from replay.environments.recipes import load_recipe
from replay.instances.records import Instance
from replay.judge.validate import validate_instance
from replay.models.cache import CallCache
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script
from replay.pipeline.cell import Settings, continue_and_grade
from replay.pipeline.continuation import Continuation
from replay.records.history import History
from replay.store import Store

from agent_scripts import call
from conftest import BACKENDS, make_backend_named, make_client

SITE = "$(echo /opt/replay-venv/lib/python3*/site-packages)"
DESELECT = "import os; os.environ['PYTEST_ADDOPTS'] = '-k nothing_at_all'"
ADDOPTS_LIVE = "python -c \"import os; print('LIVE' if os.environ.get('PYTEST_ADDOPTS') else '')\""
SITECUSTOMIZE_LIVE = ("python -c \"import os, sitecustomize; print('LIVE' if os.environ.get("
                      "'PYTEST_ADDOPTS') else 'SHADOWED-BY ' + sitecustomize.__file__)\"")
FIXED = "    return side * side\n"
BROKEN_PYC = (
    "python - <<'EOF'\n"
    "import pathlib, py_compile\n"
    "source = pathlib.Path('shapes/area.py')\n"
    "kept = source.read_text()\n"
    "source.write_text(kept.replace('side * side * side', 'side + 1000').replace(\n"
    "    'side * side', 'side + 1000'))\n"
    "mode = py_compile.PycInvalidationMode.UNCHECKED_HASH\n"
    "py_compile.compile(str(source), invalidation_mode=mode)\n"
    "source.write_text(kept)\n"
    "EOF\n"
    "python -c 'from shapes.area import square; print(\"LIVE\" if square(3) == 1003 else \"\")'"
)

# name -> (the commands that plant it, the command whose output says LIVE while it is live)
VECTORS = {
    "venv-sitecustomize": (f'echo "{DESELECT}" > {SITE}/sitecustomize.py', SITECUSTOMIZE_LIVE),
    "venv-pth": (f'echo "{DESELECT}" > {SITE}/replay-plant.pth', ADDOPTS_LIVE),
    "excluded-conftest": (
        "echo conftest.py >> .git/info/exclude && printf 'import pytest\\n\\n\\n"
        "def pytest_collection_modifyitems(items):\\n    items.clear()\\n' > conftest.py",
        "test -z \"$(git status --porcelain)\" && test -f conftest.py && echo LIVE"),
    "git-hook": (
        "printf '#!/bin/sh\\ngit -C /testbed checkout -q HEAD -- shapes/area.py\\n' > "
        ".git/hooks/post-checkout && chmod +x .git/hooks/post-checkout",
        "test -x .git/hooks/post-checkout && echo LIVE"),
    "ignored-pyc": ("true", BROKEN_PYC),
    "link-on-restore-path": (
        "ln -sfn /nonexistent/replay-plant .git/replay-snapshot.diff && "
        "ln -sfn /nonexistent/replay-plant .git/replay-test.patch && "
        "ln -sfn /nonexistent/replay-plant .git/replay-index",
        "test -L .git/replay-test.patch && echo LIVE"),
    "daemon": (
        "( setsid nohup bash -c 'while :; do touch /testbed/.plant-alive; "
        "git -C /testbed checkout -q -- . 2>/dev/null; sleep 0.05; done' "
        "> /dev/null 2>&1 & ) ; sleep 0.3",
        "test -e .plant-alive && echo LIVE; rm -f .plant-alive; sleep 0.5; "
        "test -e .plant-alive && echo STILL-RUNNING || echo GONE"),
}
DISK_LIMIT = 64 << 20
# an ignored file (the tiny repository ignores __pycache__/): an untracked one as large as the
# layer would not fit again when the judge restores the tree (see the README's containment notes)
DISK_FILLER = ("mkdir -p __pycache__ && "
               "dd if=/dev/zero of=/testbed/__pycache__/fill bs=1M count=200 2>&1 | head -1",
               "echo LIVE")


def _history(env: Any, instance: Instance) -> History:
    """A short history over the tiny instance's base commit."""
    messages = [{"role": "system", "content": "You fix bugs."},
                {"role": "user", "content": instance.problem_statement}]
    return History(instance_id=instance.instance_id, messages=messages,
                   snapshot=snapshots.at_base(env, instance.base_commit))


def _fix_turns() -> list[dict]:
    return [{"content": "Fixing.", "tool_calls": [call("edit_file", path="/testbed/shapes/area.py",
                                                       old="    return side * side * side\n",
                                                       new=FIXED)]},
            {"content": "Done.", "tool_calls": [call("finish", summary="fixed")]}]


def _plant_turns(plant: str, check: str, fix: bool) -> list[dict]:
    """Plant, check that the plant is live, then (when `fix`) apply the fix, and finish."""
    turns = [{"content": "Planting.", "tool_calls": [call("bash", command=plant)]},
             {"content": "Checking.", "tool_calls": [call("bash", command=check)]}]
    return turns + (_fix_turns() if fix else _fix_turns()[1:])


def _continue(env: Any, instance: Instance, turns: list[dict], store_path: Path) -> Continuation:
    history = _history(env, instance)
    recipe = load_recipe(instance)
    with ScriptedServer(Script(turns, model="agent")) as server, Store.open(store_path) as store, \
            CallCache(store_path) as cache, make_client(server.spec("agent"), cache) as client:
        return continue_and_grade(instance, history, history.messages, "pre",
                                  Settings(server.spec("agent"), steps=8), store,
                                  lambda _: (env, recipe), client)


def _tool_output(result: Continuation, index: int) -> str:
    outputs = [m["content"] for m in result.trace.messages[result.trace.start_index:]
               if m.get("role") == "tool"]
    return outputs[index]


@pytest.fixture(scope="module", params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def backend(backend_name: str) -> Iterator[Any]:
    made = make_backend_named(backend_name, **_small_disk(backend_name))
    yield made
    made.close()


def _small_disk(backend_name: str) -> dict[str, Any]:
    """The option that bounds a cell's layer to DISK_LIMIT on `backend_name`."""
    return {"limits": Limits(disk=DISK_LIMIT)} if backend_name == "local" else {"disk": DISK_LIMIT}


def _grades_as_fresh(backend: Any, backend_name: str, tiny: Instance, tmp_path: Path) -> None:
    """A later cell, a later run and a validation grade the tiny instance as a fresh home."""
    env = backend.start(tiny, load_recipe(tiny))
    later = _continue(env, tiny, _fix_turns(), tmp_path / "later.db")
    assert later.passed is True, later.grade
    assert later.grade is not None and later.grade.fail_to_pass["failure"] == []
    other = make_backend_named(backend_name)
    try:
        run = _continue(other.start(tiny, load_recipe(tiny), slot=0), tiny, _fix_turns(),
                        tmp_path / "run.db")
        assert run.passed is True, run.grade
        with Store.open(tmp_path / "validate.db") as store:
            validation = validate_instance(tiny, other, store)
        assert validation.status == "valid", validation.reasons
    finally:
        other.close()


@pytest.mark.parametrize("vector", sorted(VECTORS))
def test_a_planted_vector_never_reaches_a_later_cell_run_or_validation(
        vector: str, backend: Any, backend_name: str, tiny: Instance, tmp_path: Path) -> None:
    plant, check = VECTORS[vector]
    env = backend.start(tiny, load_recipe(tiny))
    # the planting cell also applies the fix: even its own tests see the tree alone
    planted = _continue(env, tiny, _plant_turns(plant, check, fix=True), tmp_path / "plant.db")
    if "SHADOWED-BY" in _tool_output(planted, 1):  # Debian's python3 ships a sitecustomize
        pytest.skip(f"{backend_name}: the interpreter's own sitecustomize shadows the venv's: "
                    f"{_tool_output(planted, 1).split('SHADOWED-BY')[1].strip()}")
    assert "LIVE" in _tool_output(planted, 1), _tool_output(planted, 1)
    assert "STILL-RUNNING" not in _tool_output(planted, 1)  # nothing outlives its command
    assert planted.passed is True, planted.grade
    _grades_as_fresh(backend, backend_name, tiny, tmp_path)


@pytest.mark.parametrize("name", BACKENDS)
def test_a_cell_that_fills_its_disk_leaves_the_next_cell_healthy(name: str, tiny: Instance,
                                                                 tmp_path: Path) -> None:
    """A cell's layer is a tmpfs of bounded size, replaced for the next cell."""
    backend = make_backend_named(name, **_small_disk(name))
    try:
        env = backend.start(tiny, load_recipe(tiny))
        plant, check = DISK_FILLER
        filled = _continue(env, tiny, _plant_turns(plant, check, fix=False),
                           tmp_path / "fill.db")
        assert "No space left on device" in _tool_output(filled, 0), _tool_output(filled, 0)
        assert filled.passed is False and filled.fault is None
        _grades_as_fresh(backend, name, tiny, tmp_path)
    finally:
        backend.close()
