"""Repository sources: the tree the agent works in holds the base commit only.

Three sources, chosen per instance: files written in this project (the demo suite) committed
deterministically, a local bare mirror with full history (`--repo-mirror`), or GitHub. In every case
the result is a repository with one commit (the base commit, with its original hash where it comes
from a mirror or GitHub), no refs, no remote, no later history, no gold patch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from replay.core.errors import InputError
from replay.instances.records import Instance

# A fixed identity and date make a commit of the same files always get the same hash.
FIXED_COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "replay",
    "GIT_AUTHOR_EMAIL": "replay@localhost",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "replay",
    "GIT_COMMITTER_EMAIL": "replay@localhost",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
}


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git with a clean, non-interactive configuration."""
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1",
                **(env or {})}
    return subprocess.run(
        ["git", "-c", "core.autocrlf=false", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, env=full_env, capture_output=True, text=True, check=check,
    )


def commit_files(files: Path, dest: Path) -> str:
    """Copy a directory of files into a new repository at `dest` and commit them reproducibly."""
    shutil.copytree(files, dest, dirs_exist_ok=True)
    git("init", "-q", str(dest))
    git("add", "-A", cwd=dest)
    git("commit", "-q", "--no-gpg-sign", "-m", "base", cwd=dest, env=FIXED_COMMIT_ENV)
    sha = git("rev-parse", "HEAD", cwd=dest).stdout.strip()
    git("checkout", "-q", "--detach", sha, cwd=dest)
    git("update-ref", "-d", "refs/heads/main", cwd=dest)
    return sha


def find_mirror(mirrors: Path, repo: str) -> Path | None:
    """Find the bare mirror of `owner/name` under `mirrors`, in any of the usual layouts."""
    owner, _, name = repo.partition("/")
    candidates = [
        mirrors / owner / name, mirrors / owner / f"{name}.git",
        mirrors / f"{owner}__{name}", mirrors / f"{owner}__{name}.git",
        mirrors / f"{owner}+{name}" / "repo", mirrors / f"{owner}+{name}",
        mirrors / name, mirrors / f"{name}.git",
    ]
    for candidate in candidates:
        if (candidate / "objects").is_dir() or (candidate / ".git").is_dir():
            return candidate
    return None


def fetch_commit(source: str, commit: str, dest: Path) -> None:
    """Make `dest` a repository holding only `commit` (shallow, original hash, no refs)."""
    git("init", "-q", str(dest))
    done = git("fetch", "-q", "--no-tags", "--depth", "1", source, commit, cwd=dest, check=False)
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "git fetch failed"
        raise InputError(f"cannot fetch commit {commit[:12]} from {source}: {reason}")
    git("checkout", "-q", "--detach", commit, cwd=dest)
    (dest / ".git" / "FETCH_HEAD").unlink(missing_ok=True)


def prepare_repo(instance: Instance, dest: Path, mirrors: Path | None = None) -> None:
    """Create the agent's repository for `instance` at `dest` (which must not exist yet)."""
    if instance.repo_files is not None:
        sha = commit_files(instance.repo_files, dest)
        if sha != instance.base_commit:
            raise InputError(
                f"instance {instance.instance_id}: files in {instance.repo_files} commit to "
                f"{sha[:12]}, not base_commit {instance.base_commit[:12]}"
            )
        return
    if mirrors is not None:
        mirror = find_mirror(mirrors, instance.repo)
        if mirror is None:
            raise InputError(f"no mirror of {instance.repo} under {mirrors} "
                             f"(expected e.g. {mirrors}/{instance.repo.replace('/', '__')}.git)")
        fetch_commit(mirror.resolve().as_uri(), instance.base_commit, dest)
        return
    fetch_commit(f"https://github.com/{instance.repo}.git", instance.base_commit, dest)


def describe_version(mirrors: Path | None, instance: Instance) -> str | None:
    """`git describe --tags` of the base commit in the mirror: the version a tagless tree lacks."""
    if mirrors is None:
        return None
    mirror = find_mirror(mirrors, instance.repo)
    if mirror is None:
        return None
    done = git("describe", "--tags", "--abbrev=0", instance.base_commit, cwd=mirror, check=False)
    return done.stdout.strip() or None
