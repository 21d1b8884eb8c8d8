"""Environment recipes: per repository and version, interpreter, pins, install and test commands.

Recipes live in the top-level `environments/` folder, one TOML file per repository
(`<owner>__<name>.toml`): a `[defaults]` table merged under each `[versions."X"]` table.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from replay.errors import InputError
from replay.instances.records import Instance
from replay.paths import environments_dir


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

    def digest(self) -> str:
        """A short hash of everything that shapes the built environment."""
        text = json.dumps(self.model_dump(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def recipe_path(repo: str, directory: Path | None = None) -> Path:
    """The recipe file of `owner/name`: `owner__name.toml`, else an owner-wide `owner.toml`."""
    base = directory or environments_dir()
    exact = base / f"{repo.replace('/', '__')}.toml"
    owner_wide = base / f"{repo.partition('/')[0]}.toml"
    return exact if exact.is_file() or not owner_wide.is_file() else owner_wide


def load_recipe(instance: Instance, directory: Path | None = None) -> Recipe:
    """The recipe for an instance's repository and version; a clear error when there is none."""
    path = recipe_path(instance.repo, directory)
    if not path.is_file():
        raise InputError(f"instance {instance.instance_id}: no environment recipe for "
                         f"{instance.repo} (expected {path})")
    try:
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: malformed TOML: {exc}") from None
    versions = spec.get("versions", {})
    if instance.version not in versions:
        known = ", ".join(sorted(versions)) or "none"
        raise InputError(f"instance {instance.instance_id}: recipe {path.name} has no version "
                         f"{instance.version!r} (has: {known})")
    merged = {**spec.get("defaults", {}), **versions[instance.version]}
    try:
        return Recipe(repo=instance.repo, version=instance.version, **merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise InputError(f"{path}: version {instance.version}: {field}: {first['msg']}") from None


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
