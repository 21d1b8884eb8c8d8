"""The judge: pure grading of saved logs, and a real test run in a local environment."""

from __future__ import annotations

from pathlib import Path

from replay.environments import snapshots
from replay.environments.local import LocalBackend
from replay.environments.recipes import Recipe, load_recipe
from replay.instances.records import Instance, load_file, select
from replay.judge.grading import grade_log, patch_files
from replay.judge.testrun import eval_script, log_file, resolve_test_command, run_tests

from conftest import VERIFIED_JSONL

PYTEST_LOG = """+ git apply -v .git/replay-test.patch
>>>>> Start Test Output
============================= test session starts ==============================
collected 2 items

tests/test_area.py .F                                                    [100%]
=========================== short test summary info ============================
PASSED tests/test_area.py::test_rectangle
FAILED tests/test_area.py::test_square - assert 27 == 9
========================= 1 failed, 1 passed in 0.03s ==========================
>>>>> End Test Output
>>>>> Test Exit Code: 1
"""


def test_grading_a_saved_log_needs_no_environment(tiny: Instance) -> None:
    grade = grade_log(tiny, PYTEST_LOG)
    assert grade.tests_ran and not grade.resolved
    assert grade.statuses == {"tests/test_area.py::test_rectangle": "PASSED",
                              "tests/test_area.py::test_square": "FAILED"}
    assert grade.fail_to_pass == {"success": [], "failure": ["tests/test_area.py::test_square"]}
    passing = PYTEST_LOG.replace("FAILED tests/test_area.py::test_square - assert 27 == 9",
                                 "PASSED tests/test_area.py::test_square")
    passing = passing.replace("Exit Code: 1", "Exit Code: 0")
    assert grade_log(tiny, passing).resolved


def test_a_log_without_test_output_is_not_resolved(tiny: Instance) -> None:
    grade = grade_log(tiny, "error: patch failed\n>>>>> Patch Apply Failed\n")
    assert not grade.tests_ran and not grade.resolved


def test_a_log_that_claims_passes_but_exited_nonzero_is_not_resolved(tiny: Instance) -> None:
    forged = PYTEST_LOG.replace("FAILED tests/test_area.py::test_square - assert 27 == 9",
                                "PASSED tests/test_area.py::test_square")
    assert not grade_log(tiny, forged).resolved


def test_patch_files_tells_new_files_from_existing() -> None:
    patch = ("diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n"
             "+++ b/tests/test_a.py\n@@ -1 +1 @@\n-x\n+y\n"
             "diff --git a/tests/new_test.py b/tests/new_test.py\nnew file mode 100644\n"
             "--- /dev/null\n+++ b/tests/new_test.py\n@@ -0,0 +1 @@\n+z\n")
    files = patch_files(patch)
    assert files.existing == ["tests/test_a.py"] and files.created == ["tests/new_test.py"]


def test_test_command_comes_from_the_rows_eval_script() -> None:
    row = select(load_file(VERIFIED_JSONL), ids=["psf__requests-5414"])[0]
    recipe = Recipe(repo=row.repo, version=row.version, python="3.9")
    assert resolve_test_command(row, recipe) == "pytest -rA tests/test_requests.py"
    script = eval_script(row, recipe)
    assert f"git checkout -q {row.base_commit} -- tests/test_requests.py" in script
    assert script.index(">>>>> Start Test Output") < script.index("pytest -rA")


def test_run_tests_grades_the_tree_and_leaves_the_agents_edits(tiny: Instance,
                                                               tmp_path: Path) -> None:
    env = LocalBackend().start(tiny, load_recipe(tiny))
    env.restore(snapshots.at_base(env, tiny.base_commit))
    before = run_tests(env, tiny, load_recipe(tiny), log_file(tmp_path / "before.log"))
    assert not before.resolved and before.tests_ran
    assert before.fail_to_pass["failure"] == ["tests/test_area.py::test_square"]
    assert Path(before.log_path).read_text().count(">>>>> Start Test Output") == 1

    env.exec("sed -i 's/side \\* side \\* side/side * side/' shapes/area.py")
    after = run_tests(env, tiny, load_recipe(tiny), log_file(tmp_path / "after.log"))
    assert after.resolved
    assert "side * side\n" in env.read_file("shapes/area.py").decode()
    assert "test_square" not in env.read_file("tests/test_area.py").decode()
    assert grade_log(tiny, Path(after.log_path).read_text()).resolved


def test_every_verified_row_has_a_parser_and_a_test_command() -> None:
    from swebench.harness.log_parsers import PARSER_REGISTRY

    rows = load_file(VERIFIED_JSONL)
    assert len(rows) == 500
    for row in rows:
        assert row.log_parser in PARSER_REGISTRY, row.instance_id
        assert patch_files(row.test_patch).all, row.instance_id
        recipe = Recipe(repo=row.repo, version=row.version, python="3.9")
        assert resolve_test_command(row, recipe).strip(), row.instance_id


def test_sphinx_targets_come_from_the_rows_tox_command() -> None:
    row = select(load_file(VERIFIED_JSONL), ids=["sphinx-doc__sphinx-9230"])[0]
    assert "tox --current-env" in resolve_test_command(
        row, Recipe(repo=row.repo, version=row.version, python="3.9"))
    recipe = Recipe(repo=row.repo, version=row.version, python="3.9",
                    test_cmd="python -m pytest -rA {test_files}")
    assert resolve_test_command(row, recipe) == "python -m pytest -rA tests/test_domain_py.py"
