"""Environment recipes: per repository and version, interpreter, pins, install and test commands.

A recipe is derived at run time from swebench's own spec for the row's repository and version
(specs.py reads the tables, derive.py translates a spec for a venv), then the repository's TOML
file in the top-level `environments/` folder (`<owner>__<name>.toml`, else an owner-wide
`<owner>.toml`) overrides what differs here, each override with a comment saying why. Its
`[defaults]` table applies to every version, then each `[versions."X"]` table whose name lists the
row's version (one version, or several separated by commas: `[versions."5.0, 5.1"]`), in file
order. A key replaces the field of that name, except:

- `add_packages`: requirements merged into the packages (one with a version replaces the entry of
  its name; see `derive.merge_packages`);
- `drop_packages`: names removed from the packages.

An owner-wide file is instead the whole recipe of repositories swebench does not know (this
project's own demo repositories: `replay-demo.toml`); its `[versions."X"]` tables list the
versions it has, and swebench's tables are not read for them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from replay.core.digest import digest
from replay.core.errors import InputError
from replay.core.paths import environments_dir, repo_mirrors_from_env
from replay.environments.derive import Derived, merge_packages, requirement_name, translate
from replay.environments.spec_files import file_reader
from replay.environments.specs import spec_tables
from replay.instances.records import Instance


class Recipe(BaseModel):
    """How to build and test one repository at one version."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repo: str
    version: str
    python: str = Field(pattern=r"^3\.\d+$")
    packages: list[str] = []
    install: str = ""
    reinstall: str = ""
    test_cmd: str = ""
    scm_version: bool = False
    unroutable: list[str] = []
    env: dict[str, str] = {}
    apt: list[str] = []
    refusal: str = ""

    def digest(self) -> str:
        """A short hash of everything that shapes the built environment (`apt` and `refusal`
        count only when set, so recipes without them keep the builds made before they existed)."""
        fields = self.model_dump()
        for name in ("apt", "refusal"):
            if not fields[name]:
                del fields[name]
        return digest(fields, spaced=True)[:12]


def recipe_path(repo: str, directory: Path | None = None) -> Path:
    """The recipe file of `owner/name`: `owner__name.toml`, else an owner-wide `owner.toml`."""
    base = directory or environments_dir()
    exact = base / f"{repo.replace('/', '__')}.toml"
    owner_wide = base / f"{repo.partition('/')[0]}.toml"
    return exact if exact.is_file() or not owner_wide.is_file() else owner_wide


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: malformed TOML: {exc}") from None


def _build(instance: Instance, fields: dict[str, Any], path: Path | None) -> Recipe:
    try:
        return Recipe(repo=instance.repo, version=instance.version, **fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        where = path or "derived recipe"
        raise InputError(f"{where}: version {instance.version}: {field}: {first['msg']}") from None


def _whole(instance: Instance, spec: dict[str, Any], path: Path) -> Recipe:
    """The recipe an owner-wide file gives on its own."""
    versions = spec.get("versions", {})
    if instance.version not in versions:
        known = ", ".join(sorted(versions)) or "none"
        raise InputError(f"instance {instance.instance_id}: recipe {path.name} has no version "
                         f"{instance.version!r} (has: {known})")
    return _build(instance, {**spec.get("defaults", {}), **versions[instance.version]}, path)


def apply_override(fields: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Fields with one override table applied (see the module docstring)."""
    merged = {**fields, **{key: value for key, value in override.items()
                           if key not in ("add_packages", "drop_packages")}}
    packages = merge_packages(list(merged.get("packages", [])),
                              list(override.get("add_packages", [])))
    dropped = {requirement_name(name) for name in override.get("drop_packages", [])}
    merged["packages"] = [entry for entry in packages if requirement_name(entry) not in dropped]
    return merged


def override_tables(spec: dict[str, Any], version: str) -> list[dict[str, Any]]:
    """The tables of a TOML override that apply to `version`, in the order they apply."""
    tables = [spec.get("defaults", {})]
    for names, table in spec.get("versions", {}).items():
        if version in [name.strip() for name in names.split(",")]:
            tables.append(table)
    return [table for table in tables if table]


def derive_recipe(instance: Instance, directory: Path | None = None,
                  mirrors: Path | None = None) -> tuple[Recipe, Derived | None]:
    """The recipe of an instance and, where it comes from swebench's spec, the derivation
    (whose `dropped` lists the spec lines not carried over)."""
    path = recipe_path(instance.repo, directory)
    spec = _read_toml(path) if path.is_file() else {}
    if path.is_file() and path.stem == instance.repo.partition("/")[0]:
        return _whole(instance, spec, path), None
    overrides = override_tables(spec, instance.version)
    tables = spec_tables()
    found = tables.spec(instance.repo, instance.version)
    commit = instance.environment_setup_commit or instance.base_commit
    read = file_reader(instance.repo, commit, mirrors or repo_mirrors_from_env())
    given = any("packages" in table for table in overrides)
    derived = translate(found, instance.repo, tables, read, packages_given=given)
    fields = derived.fields
    for table in overrides:
        fields = apply_override(fields, table)
    return _build(instance, fields, path if overrides else None), derived


def load_recipe(instance: Instance, directory: Path | None = None,
                mirrors: Path | None = None) -> Recipe:
    """The recipe for an instance's repository and version; a clear error when there is none.

    `mirrors` (else REPLAY_REPO_MIRRORS) is where a spec's requirements files are read from,
    before GitHub; once read they are cached.
    """
    return derive_recipe(instance, directory, mirrors)[0]


def recipe_variables(recipe: Recipe, instance: Instance, mirrors: Path | None) -> dict[str, str]:
    """The environment variables an instance's environment gets from its recipe.

    A recipe with `scm_version` also gets the version a tagless clone cannot compute, from
    `git describe --tags` of the base commit in the mirror.
    """
    variables = dict(recipe.env)
    if recipe.scm_version:
        from replay.environments.repos import describe_version

        version = describe_version(mirrors, instance)
        if version is None:
            raise InputError(f"instance {instance.instance_id}: its recipe needs the version "
                             "from git tags; pass --repo-mirror with a full mirror")
        variables["SETUPTOOLS_SCM_PRETEND_VERSION"] = version.removeprefix("v")
    return variables
