"""The working tree at a compaction boundary: base commit, binary diff, fingerprint.

How one is captured and restored is `replay.environments.snapshots`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from replay.core.digest import sha256_hex

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
        return sha256_hex(self.diff)
