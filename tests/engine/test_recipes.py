"""Recipes from swebench's specs: the spec tables, the translation for a venv, the overrides in
environments/, refusals, and `replay recipes` (no mirror needed; the spec tables come from the
swebench 4.1.0 wheel, downloaded once per test session from PyPI into the session's cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.core.errors import InputError
from replay.environments import specs
from replay.environments.derive import conda_packages, merge_packages, translate
from replay.environments.local import LocalBackend
from replay.environments.recipes import Recipe, derive_recipe, load_recipe
from replay.environments.spec_files import FileReader
from replay.environments.specs import SpecTables, spec_tables
from replay.instances.records import Instance, load_file, select
from replay.judge.coverage import RowCheck, check_row, coverage_table, kept_outcomes, sample
from replay.store import Store, recipe_checks

from conftest import VERIFIED_JSONL, needs_docker, run_replay

ROWS = load_file(VERIFIED_JSONL)


def row(instance_id: str) -> Instance:
    return select(ROWS, ids=[instance_id])[0]


@pytest.fixture(scope="module")
def tables() -> SpecTables:
    return spec_tables()


def files(contents: dict[str, str]) -> FileReader:
    """A repository of these files, for the translation."""
    return lambda path: contents.get(path)


def test_the_tables_come_from_the_pinned_wheel_and_know_every_verified_repository(
        tables: SpecTables) -> None:
    assert tables.origin == "swebench 4.1.0"
    assert (specs.spec_cache() / specs.WHEEL_NAME).is_file()
    assert {instance.repo for instance in ROWS} <= set(tables.specs)
    assert tables.spec("pallets/flask", "2.3")["python"] == "3.11"


def test_an_unknown_repository_or_version_is_one_clear_line(tables: SpecTables) -> None:
    with pytest.raises(InputError, match="swebench's specs .* do not know it"):
        tables.spec("me/mine", "1.0")
    with pytest.raises(InputError, match=r"no recipe for psf/requests 9\.9: .* have versions "
                                         r"0\.7, 0\.8"):
        tables.spec("psf/requests", "9.9")


def test_offline_without_the_cached_wheel_is_one_line_exit_2(tmp_path: Path) -> None:
    done = run_replay("recipes", "show", "psf__requests-5414", "--dataset", str(VERIFIED_JSONL),
                      env={"REPLAY_HOME": str(tmp_path), "PIP_NO_INDEX": "1",
                           "PIP_FIND_LINKS": ""})
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "swebench's spec tables are not here" in lines[0]
    assert "swebench 4.1.0 could not be downloaded" in lines[0]


def test_only_the_pinned_wheel_is_used(tables: SpecTables, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    index = tmp_path / "index"  # pip finds the genuine wheel here, offline
    index.mkdir()
    (index / specs.WHEEL_NAME).write_bytes((specs.spec_cache() / specs.WHEEL_NAME).read_bytes())
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / specs.WHEEL_NAME).write_bytes(b"forged")
    assert specs._sha256(specs._download(cache)) == specs.WHEEL_SHA256  # forged one replaced
    monkeypatch.setattr(specs, "WHEEL_SHA256", "0" * 64)
    with pytest.raises(InputError, match="not the pinned 0000"):
        specs._download(cache)


def test_packages_later_pins_win_and_unpinned_repeats_are_dropped() -> None:
    assert merge_packages(["numpy==1.19.2", "pytest"], ["numpy", "pytest==7.4.0", "six"]) == \
        ["numpy==1.19.2", "pytest==7.4.0", "six"]


def test_conda_packages_map_to_pip_apt_or_refusal() -> None:
    found = conda_packages(["numpy=1.21", "dask-core", "python=3.10", "graphviz", "cdms2",
                            "pip", "scipy 1.5.2", "pandas<2.0.0", "conda-forge::pint"])
    assert found.pip == ["numpy==1.21.*", "dask", "scipy==1.5.2", "pandas<2.0.0", "pint"]
    assert found.apt == ["graphviz"] and found.conda_only == ["cdms2"]


def test_a_conda_package_string_becomes_pip_requirements(tables: SpecTables) -> None:
    derived = translate(tables.spec("scikit-learn/scikit-learn", "1.3"),
                        "scikit-learn/scikit-learn", tables, files({}))
    assert derived.fields["packages"] == [
        "numpy==1.19.2", "scipy==1.5.2", "cython==3.0.10", "pytest", "pandas<2.0.0",
        "matplotlib<3.9.0", "setuptools", "joblib", "threadpoolctl"]
    assert derived.fields["python"] == "3.9" and derived.fields["refusal"] == ""


def test_requirements_are_read_with_their_includes(tables: SpecTables) -> None:
    repo = {"requirements/dev.txt": "-r tests.txt\n# note\nblack==23.1 # pinned\n-e .\n",
            "requirements/tests.txt": "pytest==7.3.0\ntypes-pkg_resources==0.1\n"}
    derived = translate(tables.spec("pallets/flask", "2.3"), "pallets/flask", tables,
                        files(repo))
    packages = derived.fields["packages"]
    assert packages[:3] == ["pytest==7.3.0", "types-setuptools", "black==23.1"]
    assert "Werkzeug==2.3.7" in packages  # the spec's pip_packages come last


def test_environment_yml_with_a_conda_only_package_is_refused(tables: SpecTables) -> None:
    yml = ("name: x\ndependencies:\n  - numpy<1.24\n  - cdms2\n  - matplotlib-base\n"
           "  - pip\n  - pip:\n    - numbagg\n    - -e .\n")
    derived = translate(tables.spec("pydata/xarray", "2022.09"), "pydata/xarray", tables,
                        files({"ci/requirements/environment.yml": yml}))
    assert derived.fields["refusal"] == "conda-only package cdms2: pip cannot install it"
    assert derived.fields["packages"][:3] == ["numpy==1.23.0", "matplotlib", "numbagg"]


def test_pre_install_apt_lines_and_exports_are_kept_the_rest_listed(tables: SpecTables) -> None:
    derived = translate(tables.spec("django/django", "2.2"), "django/django", tables,
                        files({"tests/requirements/py3.txt": "sqlparse\n"}))
    assert derived.fields["apt"] == ["locales"]
    assert derived.fields["env"]["LANG"] == "en_US.UTF-8"
    assert "pre_install: locale-gen en_US.UTF-8" in derived.dropped
    assert derived.fields["test_cmd"] == ""  # the row's own command


def test_a_missing_requirements_file_is_one_line(tables: SpecTables) -> None:
    with pytest.raises(InputError, match="none of requirements_test.txt exists"):
        translate(tables.spec("pylint-dev/pylint", "2.15"), "pylint-dev/pylint", tables,
                  files({}))


def write_override(folder: Path, repo: str, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / f"{repo.replace('/', '__')}.toml").write_text(text)
    return folder


def test_overrides_replace_add_drop_and_apply_in_file_order(tmp_path: Path) -> None:
    folder = write_override(tmp_path / "env", "sphinx-doc/sphinx", (
        '[defaults]\ndrop_packages = ["tox"]\nadd_packages = ["pytest==8.3.3"]\n'
        'test_cmd = "first"\n[versions."5.0, 5.1"]\ntest_cmd = "second"\n'
        'add_packages = ["Jinja2==3.1.0"]\n[versions."5.0"]\nscm_version = true\n'))
    recipe = load_recipe(row("sphinx-doc__sphinx-10323"), folder)
    assert recipe.version == "5.0" and recipe.test_cmd == "second" and recipe.scm_version
    assert sorted(recipe.packages) == ["Jinja2==3.1.0", "pytest==8.3.3", "tox-current-env==0.0.11"]
    other = load_recipe(row("sphinx-doc__sphinx-10449"), folder)
    assert other.version == "5.1" and not other.scm_version


def test_an_override_with_a_bad_field_names_the_file(tmp_path: Path) -> None:
    folder = write_override(tmp_path / "env", "psf/requests", '[defaults]\npython = "three"\n')
    with pytest.raises(InputError, match=r"psf__requests.toml: version 2.26: python"):
        load_recipe(row("psf__requests-5414"), folder)


def test_owner_wide_files_are_whole_recipes_without_the_spec_tables(
        tiny: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(specs, "_tables_from", lambda cache: pytest.fail("tables read"))
    recipe, derived = derive_recipe(tiny)
    assert derived is None and recipe.python == "3.11" and recipe.install == ""


def test_the_local_backend_refuses_a_refused_recipe_in_one_line(tiny: Instance) -> None:
    recipe = Recipe(repo=tiny.repo, version=tiny.version, python="3.10",
                    refusal="conda-only package cdms2: pip cannot install it")
    with pytest.raises(InputError, match="cannot build its environment: conda-only package "
                                         "cdms2"):
        LocalBackend().start(tiny, recipe)


def test_astropy_3_1_is_refused_with_its_reason_before_anything_is_built(tmp_path: Path) -> None:
    mirrors = tmp_path / "mirrors"
    (mirrors / "astropy__astropy.git" / "objects").mkdir(parents=True)
    outcome = check_row(row("astropy__astropy-8707"), mirrors, tmp_path / "r.db")
    assert outcome.status == "refused" and "astropy_helpers" in outcome.reason
    django = check_row(row("django__django-11099"), mirrors, tmp_path / "r.db")
    assert (django.status, django.reason) == ("refused", "no mirror here")


def test_a_checked_row_is_kept_and_not_run_again(tiny: Instance, tmp_path: Path) -> None:
    store = tmp_path / "r.db"
    first = check_row(tiny, None, store)
    assert first.status == "valid", first
    with Store.open_read_only(store) as opened:
        kept = recipe_checks.find(opened, tiny.instance_id)
    assert kept == first and kept.digest == load_recipe(tiny).digest()
    assert check_row(tiny, None, store) == first
    assert kept_outcomes([tiny], store, None) == [first]  # counted by later tables too


def test_sample_takes_k_rows_per_repository_and_version() -> None:
    chosen = sample(ROWS, ["psf/requests"], 1)
    assert [(r.version, r.instance_id) for r in chosen][:2] == [
        ("1.1", "psf__requests-1142"), ("2.0", "psf__requests-1724")]
    assert len(chosen) == 7 and len(sample(ROWS, ["psf/requests"], 2)) == 8
    with pytest.raises(InputError, match="unknown repository nope/nope"):
        sample(ROWS, ["nope/nope"], 1)


def test_the_coverage_table_says_what_is_proved_and_why_not() -> None:
    rows = [r for r in ROWS if r.repo in ("psf/requests", "django/django")]
    outcomes = [RowCheck("psf__requests-1142", "psf/requests", "1.1", "valid"),
                RowCheck("psf__requests-1724", "psf/requests", "2.0", "excluded",
                         "not solvable: a | b"),
                RowCheck("django__django-1", "django/django", "3.0", "refused", "no mirror here"),
                RowCheck("django__django-2", "django/django", "3.1", "refused", "no mirror here")]
    table = coverage_table(rows, outcomes).splitlines()
    assert table[0].startswith("| repository | rows | checked (valid) | versions | proved valid")
    assert table[2] == ("| django/django | 231 | 2 (0) | 9 | 0 of 9 | 3.0, 3.1: refused (no "
                        "mirror here) |")
    assert table[3] == ("| psf/requests | 8 | 2 (1) | 7 | 1 of 7 (1.1) | 2.0: excluded (not "
                        "solvable: a \\| b) |")


def test_check_with_an_unknown_repository_is_one_line_exit_2() -> None:
    done = run_replay("recipes", "check", "--dataset", str(VERIFIED_JSONL), "--repo", "nope/x")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: unknown repository nope/x: the dataset has astropy/astropy, django/django, "
        "matplotlib/matplotlib, mwaskom/seaborn, pallets/flask, psf/requests, pydata/xarray, "
        "pylint-dev/pylint, pytest-dev/pytest, scikit-learn/scikit-learn, sphinx-doc/sphinx, "
        "sympy/sympy"]


def test_show_prints_the_recipe_and_the_spec_lines_not_run() -> None:
    done = run_replay("recipes", "show", "pytest-dev__pytest-8399", "--dataset",
                      str(VERIFIED_JSONL))
    assert done.returncode == 0, done.stderr
    recipe = json.loads(done.stdout.split("\nnot run here:")[0])
    assert recipe["version"] == "6.3" and recipe["scm_version"] is True
    assert "not run here: pre_install: sed -i 's/>=>=/>=/' setup.cfg" in done.stdout


@needs_docker()
def test_docker_refuses_a_refused_recipe_without_a_prebuilt_image(tiny: Instance) -> None:
    from replay.environments.docker import DockerBackend

    recipe = load_recipe(tiny).model_copy(update={"refusal": "conda-only package gtk4: pip "
                                                             "cannot install it"})
    with DockerBackend() as backend, pytest.raises(InputError, match="no prebuilt SWE-bench "
                                                                     "image here, .* gtk4"):
        backend.start(tiny, recipe)


@needs_docker()
def test_docker_installs_a_recipes_apt_packages(tiny: Instance) -> None:
    from replay.environments.docker import DockerBackend

    recipe = load_recipe(tiny).model_copy(update={"apt": ["jq"]})
    with DockerBackend() as backend:
        env = backend.start(tiny, recipe)
        assert env.exec("echo '{\"a\": 1}' | jq .a").output.strip() == "1"


def test_reasons_in_the_table_carry_no_machine_path(tmp_path: Path) -> None:
    from replay.judge.coverage import _gist

    install = ("harness fault: environment install step failed (exit 1): /x/.venv/bin/uv pip "
               "install -q a==1\nerror: Failed to build `markupsafe==1.0`\n  cause: ...\nhint: .")
    assert _gist([install], None) == ("harness fault: environment install step failed (exit 1):"
                                      " error: Failed to build `markupsafe==1.0`")
    fetch = (f"cannot fetch commit 80c3854a5f4f from {tmp_path.as_uri()}/a%2Bb/repo: fatal: "
             "git upload-pack: aborting")
    assert _gist([fetch], tmp_path) == ("cannot fetch commit 80c3854a5f4f from the mirror: "
                                        "fatal: git upload-pack: aborting")
