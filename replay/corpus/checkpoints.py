"""Session transcripts kept by Entire on a repository's `entire/checkpoints/v1` branch, read
through git.

The branch holds one folder per checkpoint, `<xx>/<rest of id>/`, with one numbered folder per
session the checkpoint covers: `<n>/metadata.json` (its `session_id`, `created_at`, `agent`,
`transcript_lines_at_start`) and `<n>/full.jsonl` (the transcript as it stood then). A session
that spans several checkpoints has one shard in each; they are joined in the order they were
made, a line already seen being dropped (a later shard repeats the earlier lines).

A last shard whose transcript blob the repository does not hold (a snapshot leaves out large
files), or a joined transcript shorter than a shard said the transcript was, makes the session
incomplete: it is kept, marked so, and never scored as whole.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from replay.core.errors import InputError

BRANCH = "entire/checkpoints/v1"
_REFS = (BRANCH, f"refs/heads/{BRANCH}", f"refs/remotes/origin/{BRANCH}")
_SHARD = re.compile(r"^([0-9a-f]{2}/[0-9a-f]+/\d+)/metadata\.json$")
_LICENCES = (("MIT License", "MIT"), ("Apache License", "Apache-2.0"),
             ("GNU GENERAL PUBLIC LICENSE", "GPL"), ("BSD 3-Clause", "BSD-3-Clause"),
             ("Mozilla Public License", "MPL-2.0"), ("Permission is hereby granted", "MIT"))


@dataclass
class Shard:
    """One checkpoint's copy of a session's transcript."""

    path: str  # the shard's folder on the branch
    created: str
    agent: str
    lines_at_start: int
    blob: str | None  # the transcript's object id; None when the branch has no full.jsonl


@dataclass
class CheckpointSession:
    """One session of a repository: its shards in order, and its joined lines."""

    session_id: str
    shards: list[Shard] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # shards whose transcript is absent

    @property
    def complete(self) -> bool:
        """Whether the last shard's transcript was read and the joined lines reach the length
        every shard announced (an earlier shard's absence is filled by a later one that repeats
        its lines)."""
        expected = max((shard.lines_at_start for shard in self.shards), default=0)
        return self.shards[-1].path not in self.missing and len(self.lines) >= expected


class Repository:
    """A git directory (a clone's `.git`, or a bare mirror) holding the checkpoint branch."""

    def __init__(self, git_dir: Path, name: str) -> None:
        self.git_dir, self.name = git_dir, name
        self.ref = self._branch()
        self.commit = self._git("rev-parse", self.ref).strip()

    def _git(self, *args: str, stdin: bytes | None = None) -> str:
        done = subprocess.run(["git", "--git-dir", str(self.git_dir), *args], input=stdin,
                              capture_output=True, check=False)
        if done.returncode:
            raise InputError(f"{self.name}: git {args[0]} failed: "
                             f"{done.stderr.decode(errors='replace').strip()}")
        return done.stdout.decode("utf-8", errors="replace")

    def _branch(self) -> str:
        for ref in _REFS:
            probe = subprocess.run(["git", "--git-dir", str(self.git_dir), "rev-parse",
                                    "--verify", "--quiet", ref], capture_output=True, check=False)
            if probe.returncode == 0:
                return ref
        raise InputError(f"{self.name}: no branch {BRANCH} (is it an Entire repository?)")

    def licence(self) -> str:
        """The licence of the repository's default branch, from its LICENSE file's opening."""
        names = self._git("ls-tree", "--name-only", "HEAD").split() if self._has_head() else []
        for name in names:
            if name.upper().startswith(("LICENSE", "LICENCE", "COPYING")):
                text = self._git("show", f"HEAD:{name}")[:2000]
                return next((spdx for mark, spdx in _LICENCES if mark in text), "other")
        return "none found"

    def _has_head(self) -> bool:
        return subprocess.run(["git", "--git-dir", str(self.git_dir), "rev-parse", "--verify",
                               "--quiet", "HEAD"], capture_output=True, check=False).returncode == 0

    def sessions(self) -> list[CheckpointSession]:
        """Every session on the branch with its shards in order (lines not yet read)."""
        listing = self._git("ls-tree", "-r", self.ref)
        objects = {}
        for row in listing.splitlines():
            meta, path = row.split("\t", 1)
            objects[path] = meta.split()[2]
        shards: dict[str, CheckpointSession] = {}
        for path, metadata in zip(*self._metadata(objects), strict=True):
            key = str(metadata.get("session_id") or path)
            session = shards.setdefault(key, CheckpointSession(key))
            session.shards.append(Shard(path, str(metadata.get("created_at") or ""),
                                        str(metadata.get("agent") or ""),
                                        _count(metadata.get("transcript_lines_at_start")),
                                        objects.get(f"{path}/full.jsonl")))
        for session in shards.values():
            session.shards.sort(key=lambda shard: (shard.created, shard.path))
        return sorted(shards.values(), key=lambda s: s.shards[0].created)

    def _metadata(self, objects: dict[str, str]) -> tuple[list[str], list[dict]]:
        paths = [m.group(1) for m in map(_SHARD.match, sorted(objects)) if m]
        texts = self.blobs([objects[f"{path}/metadata.json"] for path in paths])
        found = []
        for path, text in zip(paths, texts, strict=True):
            try:
                value = json.loads(text or "{}")
            except json.JSONDecodeError:
                raise InputError(f"{self.name}: {path}/metadata.json is not JSON") from None
            found.append(value if isinstance(value, dict) else {})
        return paths, found

    def blobs(self, ids: list[str]) -> Iterator[str | None]:
        """The text of each object (None for one the repository does not hold), in order."""
        if not ids:
            return
        with subprocess.Popen(["git", "--git-dir", str(self.git_dir), "cat-file", "--batch"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE) as git:
            assert git.stdin and git.stdout
            for identifier in ids:
                git.stdin.write(f"{identifier}\n".encode())
                git.stdin.flush()
                header = git.stdout.readline().decode().split()
                if len(header) < 3 or header[1] == "missing":
                    yield None
                    continue
                data = git.stdout.read(int(header[2]))
                git.stdout.read(1)
                yield data.decode("utf-8", errors="replace")
            git.stdin.close()

    def join(self, session: CheckpointSession) -> None:
        """Read the session's shards and join their lines in order, dropping repeated lines."""
        seen: set[str] = set()
        for shard, text in zip(session.shards, self.blobs(
                [shard.blob or "0" * 40 for shard in session.shards]), strict=True):
            if shard.blob is None or text is None:
                session.missing.append(shard.path)
                continue
            for line in text.splitlines():
                if line.strip() and line not in seen:
                    seen.add(line)
                    session.lines.append(line)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
