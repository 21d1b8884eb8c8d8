"""What a probe-panel task is made of, and helpers shared by the task definitions.

A task is a small repository (its fixture tree, with logs and other evidence), an issue, a gold
patch (`fixed` files) and a test patch (`tests` files), the Phase A turns of a scripted agent
that investigates with real commands and stops before editing, and the probes: facts that only
the outputs of those commands show. Noise in the fixtures comes from `random.Random(seed)`, so
the tree, and with it every history, is the same on every build.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
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

    @property
    def repo(self) -> str:
        """The repository instance.json names."""
        return f"replay-panel/{self.name}"

    def own_files(self) -> dict[str, str]:
        """Files of the task's folder beside its instance, history and probes (none)."""
        return {}

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


SENTENCES = [
    "It is a small package with no runtime dependencies beyond the standard library.",
    "Every public function has a docstring and a test; the tests run in well under a second.",
    "Configuration is read once at start-up and never changes while the process runs.",
    "Errors are raised as exceptions with a message that names the offending value.",
    "The code favours plain data and small functions over classes with hidden state.",
    "Deployment happens from the main branch after the nightly checks have passed.",
    "Logs are written one event per line, oldest first, with a timestamp in UTC.",
    "Issues are triaged every Monday; anything urgent goes to the on-call channel.",
    "Pull requests need one review and a green test run before they are merged.",
    "Generated files are committed so that a fresh checkout works without tooling.",
    "The command line is a thin layer over the library and carries no logic of its own.",
    "Backwards compatibility is kept for one minor release after a deprecation.",
    "Performance matters less than clarity, except on the paths the profiler flags.",
    "Secrets never live in the repository; they come from the environment at run time.",
    "The style guide is enforced by the linter, so reviews can focus on behaviour.",
    "Each module starts with a short docstring saying what it is for.",
]
CHANGES = ["tidier error messages", "faster start-up", "fewer dependencies",
           "clearer logging", "a new option for quiet runs", "documentation fixes",
           "stricter input checks", "smaller release artifacts", "more tests",
           "a reworked configuration loader", "support for the newest interpreter"]


def readme(title: str, about: str, seed: int) -> str:
    """A README of a few paragraphs that states no fact a probe asks for (no number at all)."""
    rng = random.Random(seed)
    paragraphs = [" ".join(rng.sample(SENTENCES, 4)) for _ in range(3)]
    changes = "".join(f"- {rng.choice(['Added', 'Changed', 'Fixed'])}: {rng.choice(CHANGES)}\n"
                      for _ in range(10))
    development = " ".join(rng.sample(SENTENCES, 3))
    return (f"# {title}\n\n{about}\n\n" + "\n\n".join(paragraphs) +
            f"\n\n## Development\n\n{development}\n\n## Changes\n\n{changes}")


def in_context(title: str, about: str, seed: int,
               test_file: str) -> Callable[[Callable[[], Task]], Callable[[], Task]]:
    """A primary task's maker, its task given the reading an agent does around the evidence:
    the README first, the existing tests last (outputs that hold none of the probed facts)."""
    def wrap(make: Callable[[], Task]) -> Callable[[], Task]:
        @functools.wraps(make)
        def made() -> Task:
            task = make()
            task.files["README.md"] = readme(title, about, seed)
            task.steps = [turn("Let me start with the README.", bash("cat README.md")),
                          *task.steps, turn("Let me look at the existing tests.", read(test_file))]
            return task
        return made
    return wrap
