"""The working tree at a compaction boundary: base commit, binary diff, fingerprint.

How one is captured and restored is `replay.environments.snapshots`.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict

SCHEMA = 1


class Snapshot(BaseModel):
    """The working tree at a boundary: `diff` from `base_commit` (untracked files included,
    ignored ones not), and `fingerprint`, the git tree hash of base + diff."""

    model_config = ConfigDict(frozen=True)

    base_commit: str
    diff: bytes
    fingerprint: str

    @property
    def diff_sha256(self) -> str:
        """The sha256 of the diff's bytes."""
        return hashlib.sha256(self.diff).hexdigest()
