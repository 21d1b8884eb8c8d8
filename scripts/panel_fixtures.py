"""What a probe-panel task is made of, and helpers shared by the task definitions.

A task is a small repository (its fixture tree, with logs and other evidence), an issue, a gold
patch (`fixed` files) and a test patch (`tests` files), the Phase A turns of a scripted agent
that investigates with real commands and stops before editing, and the probes: facts that only
the outputs of those commands show. Noise in the fixtures comes from `random.Random(seed)`, so
the tree, and with it every history, is the same on every build.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n"


def pyproject(name: str, description: str) -> str:
    """A pyproject.toml that lets pytest import the package from the repository root."""
    return (f'[project]\nname = "{name}"\nversion = "1.0.0"\ndescription = "{description}"\n'
            'requires-python = ">=3.10"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
            'pythonpath = ["."]\n')


def call(name: str, **arguments: object) -> dict[str, Any]:
    """A scripted tool call."""
    return {"function": {"name": name, "arguments": arguments}}


def bash(command: str) -> dict[str, Any]:
    return call("bash", command=command)


def read(path: str) -> dict[str, Any]:
    return call("read_file", path=f"/testbed/{path}")


def turn(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    """One scripted response: a short remark (never a fact) and its tool calls."""
    return {"content": text, "tool_calls": list(calls)}


def field_spec(kind: str, description: str, order_free: bool = False) -> dict[str, Any]:
    """One field of a probe, as probe files write it."""
    spec: dict[str, Any] = {"type": kind, "description": description}
    if order_free:
        spec["order_free"] = True
    return spec


@dataclass
class Task:
    """One probe-panel task (see the module docstring)."""

    name: str
    cohort: str
    problem: str
    files: dict[str, str]
    fixed: dict[str, str]
    tests: dict[str, str]
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    steps: list[dict[str, Any]]
    probes: list[dict[str, Any]]
    reason: str
    version: str = "1.0"

    @property
    def instance_id(self) -> str:
        return f"replay-panel__{self.name}-1"

    def fix_turns(self) -> list[dict[str, Any]]:
        """After the boundary: write the gold files, run the tests, finish."""
        writes = [call("write_file", path=f"/testbed/{path}", content=text)
                  for path, text in self.fixed.items()]
        return [turn("Applying the fix.", *writes),
                turn("Running the tests.", bash("python -m pytest -q -p no:cacheprovider")),
                turn("Done.", call("finish", summary="fixed"))]


def hex_id(rng: Any, length: int = 8) -> str:
    """A random lower-case hex string."""
    return "".join(rng.choice("0123456789abcdef") for _ in range(length))
