"""The recipes derived from swebench's specs plus the overrides in environments/ equal, field by
field, the hand-written recipes that were proved on real rows, for every Verified row of those
repositories (a guard: the proved rows keep validating exactly as before).

tests/fixtures/recipes-before/ holds the hand-written files as they were when proved. django's is
not compared: it was never proved (no mirror here), and its recipe now reads the requirements of
the row's environment_setup_commit, as SWE-bench does, not the base tree's at install time. Apart
from the old fields, a recipe may now name the spec's apt packages (sphinx 7.2: graphviz, which the
proof of 10614 installed on the machine by hand).
"""

from __future__ import annotations

import tomllib

import pytest

from replay.environments.recipes import Recipe, load_recipe
from replay.instances.records import Instance, load_file

from conftest import VERIFIED_JSONL
from paths import FIXTURES

BEFORE = FIXTURES / "recipes-before"
PROVED = ["astropy/astropy", "psf/requests", "pydata/xarray", "pytest-dev/pytest",
          "sphinx-doc/sphinx", "sympy/sympy"]


def _hand_written(row: Instance) -> Recipe | None:
    """The recipe the hand-written file gave the row (None where it had no such version)."""
    spec = tomllib.loads((BEFORE / f"{row.repo.replace('/', '__')}.toml").read_text())
    if row.version not in spec["versions"]:
        return None
    return Recipe(repo=row.repo, version=row.version,
                  **{**spec["defaults"], **spec["versions"][row.version]})


def _rows() -> list[Instance]:
    return [row for row in load_file(VERIFIED_JSONL) if row.repo in PROVED]


@pytest.mark.parametrize("repo", PROVED)
def test_derived_recipes_equal_the_hand_written_ones(repo: str) -> None:
    compared = 0
    for row in (row for row in _rows() if row.repo == repo):
        before = _hand_written(row)
        if before is None:
            continue
        now = load_recipe(row)
        for name in Recipe.model_fields:
            old, new = getattr(before, name), getattr(now, name)
            if name == "packages":  # installed by one resolve: the order is not a difference
                old, new = sorted(old), sorted(new)
            if name == "apt":
                assert set(new) <= {"graphviz"}, row.instance_id
                continue
            assert new == old, f"{row.instance_id}: {name}"
        compared += 1
    assert compared >= 8


def test_every_verified_row_of_the_proved_repositories_was_compared() -> None:
    """Rows whose version the hand-written files did not have are the ones they said they left
    out (astropy 1.3 and 3.1); the others were all compared above."""
    missing = {(row.repo, row.version) for row in _rows() if _hand_written(row) is None}
    assert missing == {("astropy/astropy", "1.3"), ("astropy/astropy", "3.1")}
