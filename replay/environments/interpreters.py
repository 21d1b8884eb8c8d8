"""Find a Python interpreter of a given X.Y version: uv, pyenv, then PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from replay.core.errors import InputError


def uv_binary() -> str:
    """The uv executable: the one installed beside replay, else the one on PATH."""
    beside = Path(sys.executable).with_name("uv")
    if beside.is_file():
        return str(beside)
    found = shutil.which("uv")
    if found is None:
        raise InputError("uv not found: run scripts/setup.sh (it installs uv with replay)")
    return found


def _reports_version(python: Path, version: str) -> bool:
    try:
        done = subprocess.run(
            [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=30,
        )
    except OSError:
        return False
    return done.returncode == 0 and done.stdout.strip() == version


def _from_uv(version: str) -> Path | None:
    try:
        done = subprocess.run([uv_binary(), "python", "find", "--no-python-downloads", version],
                              capture_output=True, text=True, timeout=30)
    except (OSError, InputError):
        return None
    path = Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None
    return path if path and _reports_version(path, version) else None


def _from_pyenv(version: str) -> Path | None:
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    for candidate in sorted(root.glob(f"{version}.*"), reverse=True):
        python = candidate / "bin" / "python"
        if python.is_file() and _reports_version(python, version):
            return python
    return None


def _from_path(version: str) -> Path | None:
    found = shutil.which(f"python{version}")
    return Path(found) if found and _reports_version(Path(found), version) else None


def find_python(version: str) -> Path:
    """The absolute path of a Python X.Y; a clear error naming the version when none is found."""
    for finder in (_from_pyenv, _from_uv, _from_path):
        found = finder(version)
        if found is not None:
            return found
    raise InputError(
        f"no Python {version} found (looked in pyenv versions, `uv python find`, and "
        f"python{version} on PATH); install one: `pyenv install {version}`, `uv python "
        f"install {version}`, or your distribution's python{version} package"
    )
