"""Recipe coverage: validate K rows per repository and version, and say what holds here.

For each (repository, version) of a dataset, the first K rows by instance id are checked: the
recipe is derived (environments/recipes.py); a row is `refused` before anything is built when the
recipe cannot be had or built here (no spec, a conda-only package or an override's refusal, no
Python of its version, no mirror of its repository in the mirrors folder given), else it is
validated on the local backend (validate.py) and is `valid`, `excluded` or `error`. Each row's
outcome is kept in the store (`replay.store.recipe_checks`) with the recipe's digest, so a
check cut short and run again skips the rows found valid or excluded with the same recipe.
Environments are built in a scratch folder removed after each row: a check of every version
does not fill the disk, and never reuses a build made before.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from replay.core.errors import InputError
from replay.core.paths import home
from replay.core.vocab import ValidationStatus
from replay.environments.builds import missing_system_packages
from replay.environments.interpreters import find_python
from replay.environments.local import LocalBackend
from replay.environments.recipes import Recipe, load_recipe
from replay.environments.repos import find_mirror
from replay.instances.records import Instance
from replay.judge.validate import validate_instance
from replay.records.recipe_check import RowCheck
from replay.store import Store, recipe_checks

NO_MIRROR = "no mirror here"


def sample(rows: Iterable[Instance], repos: list[str], k: int) -> list[Instance]:
    """The first `k` rows by instance id of each (repository, version), of `repos` if given."""
    rows = list(rows)
    known = sorted({row.repo for row in rows})
    unknown = [repo for repo in repos if repo not in known]
    if unknown:
        raise InputError(f"unknown repository {unknown[0]}: the dataset has {', '.join(known)}")
    groups: dict[tuple[str, str], list[Instance]] = {}
    for row in sorted(rows, key=lambda row: row.instance_id):
        if not repos or row.repo in repos:
            groups.setdefault((row.repo, row.version), []).append(row)
    return [row for group in groups.values() for row in group[:k]]


def _refusal(instance: Instance, mirrors: Path | None) -> tuple[Recipe | None, str]:
    """The row's recipe, or why it is refused before anything is built."""
    if mirrors is not None and find_mirror(mirrors, instance.repo) is None:
        return None, NO_MIRROR
    try:
        recipe = load_recipe(instance, mirrors=mirrors)
        if recipe.refusal:
            return recipe, recipe.refusal
        find_python(recipe.python)
    except InputError as exc:
        return None, str(exc)
    return recipe, ""


def _earlier(store: Store, instance: Instance, digest: str) -> RowCheck | None:
    found = recipe_checks.find(store, instance.instance_id) if digest else None
    if found is None:
        return None
    verdicts = (ValidationStatus.VALID, ValidationStatus.EXCLUDED)
    return found if found.digest == digest and found.status in verdicts else None


def check_row(instance: Instance, mirrors: Path | None, store_path: Path) -> RowCheck:
    """Check one row (see the module docstring) and keep its outcome in the store."""
    started = time.monotonic()
    recipe, refused = _refusal(instance, mirrors)
    digest = recipe.digest() if recipe is not None else ""
    with Store.open(store_path) as store:
        earlier = None if refused else _earlier(store, instance, digest)
        if earlier is not None:
            return earlier
        if refused:
            outcome = RowCheck(instance.instance_id, instance.repo, instance.version, "refused",
                               refused.splitlines()[0], digest=digest)
        else:
            assert recipe is not None
            scratch = Path(tempfile.mkdtemp(prefix="recipe-check-", dir=_scratch_root()))
            backend = LocalBackend(root=scratch, mirrors=mirrors)
            try:
                verdict = validate_instance(instance, backend, store, recipe=recipe)
                status, reason = verdict.status, _gist(verdict.reasons, mirrors)
            except InputError as exc:
                status, reason = "refused", _gist([str(exc)], mirrors)
            finally:
                backend.close()
                shutil.rmtree(scratch, ignore_errors=True)
            valid = status == ValidationStatus.VALID
            lacking = [] if valid else missing_system_packages(recipe.apt)
            if lacking:
                reason += f" (this machine lacks the recipe's apt packages: {' '.join(lacking)})"
            outcome = RowCheck(instance.instance_id, instance.repo, instance.version, status,
                               reason, digest=digest)
        outcome = replace(outcome, seconds=round(time.monotonic() - started, 1))
        recipe_checks.keep(store, outcome)
    return outcome


def kept_outcomes(rows: Iterable[Instance], store_path: Path,
                  mirrors: Path | None) -> list[RowCheck]:
    """The valid and excluded outcomes the store keeps for `rows` from earlier checks whose
    recipe is still the same (so a table can count rows checked by other runs too)."""
    found = []
    with Store.open(store_path) as store:
        for instance in rows:
            outcome = recipe_checks.find(store, instance.instance_id)
            if outcome is None or outcome.status not in (ValidationStatus.VALID,
                                                         ValidationStatus.EXCLUDED):
                continue
            try:
                digest = load_recipe(instance, mirrors=mirrors).digest()
            except InputError:
                continue
            if digest == outcome.digest:
                found.append(outcome)
    return found


def _gist(reasons: list[str], mirrors: Path | None) -> str:
    """The first reason in one line, without this machine's paths: a failed install step is
    said by its first error line (uv's, pip's or git's), else its last line."""
    if not reasons:
        return ""
    lines = [line.strip() for line in reasons[0].splitlines() if line.strip()]
    head = re.sub(r"(install step failed \(exit \d+\)): .*", r"\1", lines[0])
    errors = [line for line in lines[1:] if re.match(r"(error|fatal)\b", line, re.IGNORECASE)]
    text = head if len(lines) < 2 else f"{head}: {(errors or lines[-1:])[0]}"
    if mirrors is not None:
        text = re.sub(re.escape(mirrors.resolve().as_uri()) + r"[^\s:]*", "the mirror", text)
        text = text.replace(str(mirrors), "the mirrors folder")
    return re.sub(r"\S*/bin/uv\b", "uv", text)


def _scratch_root() -> Path:
    root = home() / "recipe-check"
    root.mkdir(parents=True, exist_ok=True)
    return root


def check_recipes(rows: list[Instance], mirrors: Path | None, store_path: Path, jobs: int = 1,
                  done: Callable[[RowCheck], None] | None = None) -> list[RowCheck]:
    """Check every row (at most `jobs` at once), calling `done` with each outcome as it lands."""
    def one(instance: Instance) -> RowCheck:
        """Check a row and report it."""
        outcome = check_row(instance, mirrors, store_path)
        if done is not None:
            done(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, rows))


def _cell(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _version_key(version: str) -> tuple[int | str, ...]:
    return tuple(int(part) if part.isdigit() else part for part in version.lstrip("v").split("."))


def coverage_table(rows: list[Instance], outcomes: list[RowCheck]) -> str:
    """A Markdown table per repository: rows, rows checked (and valid), versions, the versions
    proved valid here (a checked row valid), and for each other version what its first checked
    row met."""
    lines = ["| repository | rows | checked (valid) | versions | proved valid here | "
             "not proved: why |", "|---|---:|---:|---:|---|---|"]
    for repo in sorted({row.repo for row in rows}):
        versions = sorted({row.version for row in rows if row.repo == repo}, key=_version_key)
        mine = [outcome for outcome in outcomes if outcome.repo == repo]
        valid = [version for version in versions
                 if any(o.version == version and o.status == ValidationStatus.VALID for o in mine)]
        why = []
        for version in versions:
            checked = [o for o in mine if o.version == version]
            if version not in valid and checked:
                first = checked[0]
                why.append(f"{version}: {first.status}" + (f" ({first.reason})"
                                                           if first.reason else ""))
        reasons = _merge_reasons(why)
        proved = f"{len(valid)} of {len(versions)}" + (f" ({', '.join(valid)})" if valid else "")
        count = sum(1 for row in rows if row.repo == repo)
        passed = sum(1 for outcome in mine if outcome.status == ValidationStatus.VALID)
        lines.append(f"| {repo} | {count} | {len(mine)} ({passed}) | {len(versions)} | {proved} "
                     f"| {'; '.join(_cell(reason) for reason in reasons) or '-'} |")
    return "\n".join(lines)


def _merge_reasons(why: list[str]) -> list[str]:
    """Versions that met the same thing, said once: `3.0, 3.1: refused (no mirror here)`."""
    grouped: dict[str, list[str]] = {}
    for entry in why:
        version, _, what = entry.partition(": ")
        grouped.setdefault(what, []).append(version)
    return [f"{', '.join(versions)}: {what}" for what, versions in grouped.items()]
