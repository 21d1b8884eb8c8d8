"""The repository files a spec names (requirements, environment.yml), as SWE-bench reads them.

SWE-bench reads a row's requirements file or environment.yml from the repository at the row's
`environment_setup_commit`. Here they come from the bare mirror (`git show COMMIT:PATH`), else from
GitHub's raw files as swebench itself fetches them, and are kept in replay's cache
(`<REPLAY_HOME>/swebench-specs/files/`): a commit's file never changes, so once read, a recipe is
derived again without the mirror or the network.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import httpx

from replay.core.errors import InputError
from replay.core.files import write_atomic
from replay.core.paths import home
from replay.environments.repos import find_mirror, git

RAW = "https://raw.githubusercontent.com"
FileReader = Callable[[str], "str | None"]


def _cached(repo: str, commit: str, path: str) -> Path:
    return home() / "swebench-specs" / "files" / repo.replace("/", "__") / commit / path


def _from_mirror(mirror: Path, commit: str, path: str) -> str | None:
    done = git("show", f"{commit}:{path}", cwd=mirror, check=False)
    if done.returncode == 0:
        return done.stdout
    if git("cat-file", "-e", f"{commit}^{{commit}}", cwd=mirror, check=False).returncode != 0:
        raise InputError(f"the mirror {mirror} lacks commit {commit[:12]} (the row's "
                         "environment_setup_commit): refresh the mirror")
    return None


def _from_github(repo: str, commit: str, path: str) -> str | None:
    url = f"{RAW}/{repo}/{commit}/{path}"
    try:
        response = httpx.get(url, timeout=30, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise InputError(f"cannot read {path} of {repo} at {commit[:12]}: no mirror of it "
                         f"(--repo-mirror) and GitHub is unreachable ({exc})") from None
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise InputError(f"cannot read {path} of {repo} at {commit[:12]} from GitHub "
                         f"(HTTP {response.status_code}); give --repo-mirror")
    return response.text


def file_reader(repo: str, commit: str, mirrors: Path | None) -> FileReader:
    """A function giving the text of a file of `repo` at `commit`, or None where it is absent."""
    if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise InputError(f"{repo}: environment_setup_commit {commit!r} is not a commit hash")
    mirror = find_mirror(mirrors, repo) if mirrors is not None else None

    def read(path: str) -> str | None:
        """The file's text from the cache, else the mirror or GitHub (then cached)."""
        cached = _cached(repo, commit, path)
        if cached.is_file():
            return cached.read_text(encoding="utf-8")
        text = (_from_mirror(mirror, commit, path) if mirror is not None
                else _from_github(repo, commit, path))
        if text is not None:
            write_atomic(cached, text)
        return text

    return read
