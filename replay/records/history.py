"""Phase A histories: the messages up to a compaction boundary and the tree at that boundary,
and the record of a history's file (`history.json` with `snapshot.diff` beside it), in a suite
and in the store alike.

Where they are found is `replay.histories.records`; where they are kept, `replay.store.histories`.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from replay.core.digest import digest
from replay.core.vocab import ActionFormat
from replay.records.snapshot import Snapshot
from replay.records.stored import stamped, unstamped

SCHEMA = 2  # 2: history.json names its format and version, and keeps `dialect` by its name
FORMAT = "replay.history"


class Boundary(BaseModel):
    """Where a history stops: the `rule` that cut it (`steps:N`, `tokens:N`, `before-edit`),
    the `step` it stops after, of `steps_total` in the trajectory, and the context's `tokens`
    there (`tokens_estimated` when no model reported them); `reason` why a hand-built history
    stops where it does. A history's file keeps the fields it was given, no others."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str = ""
    step: int = 0
    tokens: int = 0
    tokens_estimated: bool = False
    steps_total: int = 0
    reason: str = ""

    def record(self) -> dict[str, Any]:
        """The fields it was given, as a history's file keeps them."""
        return self.model_dump(mode="json", exclude_unset=True)


class History(BaseModel):
    """Messages in OpenAI chat format (with tool calls), where they stop, and the tree there.

    `boundary` says where it stops (rule, step, token count); `resolved` whether
    the full trajectory went on to resolve the instance (None when unknown); `trajectory` the key
    of the trajectory it was cut from; `divergences` the recorded outputs that differed from
    execution when the trajectory was imported; `dialect` how its agent spoke (tool calls, or
    mini-swe-agent's text actions or bash calls with a submit sentinel), which a continuation
    from it speaks too (`replay.agent.dialects`; files of version 1 name it `protocol`, read
    too). `provenance` says where a trajectory made
    elsewhere came from, as its importer wrote it (`repository`, `path`, `commit`, `sha256` of
    the trajectory file, `model`, `license`); like `model` and `source` it is not part of the
    history's content id.
    """

    model_config = ConfigDict(frozen=True, validate_by_name=True)

    instance_id: str
    messages: list[dict[str, Any]]
    boundary: Boundary = Boundary()
    model: str = ""
    source: str = ""
    snapshot: Snapshot
    resolved: bool | None = None
    trajectory: str = ""
    divergences: list[str] = []
    dialect: str = Field(ActionFormat.TOOL_CALLS,
                         validation_alias=AliasChoices("dialect", "protocol"))
    provenance: dict[str, str] = {}

    def content_id(self) -> str:
        """sha256 of the messages, the snapshot fingerprint and the boundary rule."""
        content = {"messages": self.messages, "fingerprint": self.snapshot.fingerprint,
                   "boundary": self.boundary.rule}
        return digest(content)


HISTORY_FILE = "history.json"  # a history's record, its snapshot's diff named, not inlined
DIFF_FILE = "snapshot.diff"  # the diff, beside it


def history_record(history: History) -> dict[str, Any]:
    """The JSON of history.json: the history with its snapshot diff named, not inlined."""
    data = history.model_dump(mode="json", exclude={"snapshot"})
    data["boundary"] = history.boundary.record()
    data["snapshot"] = {"base_commit": history.snapshot.base_commit,
                        "fingerprint": history.snapshot.fingerprint, "diff": DIFF_FILE}
    return stamped(FORMAT, SCHEMA, data)


def from_record(data: dict[str, Any], diff: bytes) -> History:
    """The history a history.json holds, given the bytes of the diff it names (raises
    pydantic's `ValidationError`, or `KeyError`/`TypeError` for a record without a snapshot)."""
    _, fields = unstamped(data)
    return History.model_validate({**fields, "snapshot": {**fields["snapshot"], "diff": diff}})
