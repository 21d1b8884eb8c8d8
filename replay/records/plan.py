"""Plans of sweeps: what a stored sweep shares (its frame) and what it varies.

How plans are kept in the store is `replay.store.runs`; how a plan is bound to its stored run,
`replay.sweep.plan`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from replay.core.digest import digest
from replay.core.vocab import ActionFormat, Arm, Carrier, SweepKind
from replay.records.cell import CellId

SCHEMA = 2  # 2: names its format and version, and keeps `dialect` by its name
FORMAT = "replay.plan"
CONFIRM_SEEDS = (1, 2)  # the seeds a damaged pair is re-run with (protocol step 8)
DEFAULT_TEMPERATURE = 1.0  # what new runs sample at (see Plan.temperature)


class PlannedHistory(BaseModel):
    """The Phase A history one instance of a run continues from, as the run chose it: its
    content id, its boundary rule, its agent's dialect and model, where it came from (`source`,
    `provenance`), and whether it is the one bundled with the instance (see
    `replay.histories.planned`). Plans kept before the rename name the dialect `protocol`, which
    reads too."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True)

    instance_id: str
    id: str
    rule: str = ""
    dialect: str = Field(ActionFormat.TOOL_CALLS,
                         validation_alias=AliasChoices("dialect", "protocol"))
    model: str = ""
    source: str = ""
    bundled: bool = False
    provenance: dict[str, str] = {}


class Plan(BaseModel):
    """What a run shares (its frame) and what it varies (instances, summarizers).

    `temperature` is what the agent and the summarizers sample at (a model's own `temperature`
    setting wins for that model). Commands give new runs `DEFAULT_TEMPERATURE`; the 0.0 default
    is what runs stored before it was a setting ran at, so they load as they were.

    `histories` records the history each instance continues from, chosen once when the
    instance joins the run; runs stored before it was recorded have none, and record the
    choice made when they next run.

    `test_timeout` is the seconds a cell's tests may run (`--test-timeout`), kept for the run's
    life; None: each instance's own, derived from its validation (`replay.judge.timeouts`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SweepKind
    suite: str = "demo"
    dataset: str | None = None
    agent: str
    agent_id: str
    carrier: Carrier = Carrier.SUMMARY_ONLY
    steps: int = 8
    temperature: float = Field(default=0.0, ge=0)
    prompt_sources: str | None = None
    backend: str = "local"
    instances: tuple[str, ...]
    summarizers: tuple[str, ...]
    confirm: tuple[tuple[str, str], ...] = ()
    histories: tuple[PlannedHistory, ...] = ()
    test_timeout: float | None = Field(default=None, gt=0)

    def history_ids(self) -> dict[str, str]:
        """Instance id -> the content id of the history the run continues it from."""
        return {found.instance_id: found.id for found in self.histories}

    def frame(self) -> dict[str, Any]:
        """What every cell shares; a run keeps one frame for life."""
        return {"kind": self.kind, "suite": self.suite, "dataset": self.dataset,
                "agent_id": self.agent_id, "carrier": self.carrier, "steps": self.steps,
                "temperature": self.temperature, "prompt_sources": self.prompt_sources}

    def default_name(self) -> str:
        """The run name used when none is given: the same command resumes the same run, and
        the same selection with other histories starts another."""
        content = {**self.frame(), "instances": self.instances, "summarizers": self.summarizers}
        if self.histories:
            content["histories"] = self.history_ids()
        return f"{self.kind}-{digest(content)[:10]}"

    def cells(self) -> list[CellId]:
        """Every cell of the plan: PRE per instance, POST per pair, confirmation re-runs."""
        cells = [CellId(instance, Arm.PRE, "", 0) for instance in self.instances]
        cells += [CellId(instance, Arm.POST, summarizer, 0)
                  for instance in self.instances for summarizer in self.summarizers]
        cells += [CellId(instance, Arm.POST, summarizer, seed)
                  for instance, summarizer in self.confirm for seed in CONFIRM_SEEDS]
        return cells

    def extended(self, other: Plan) -> Plan:
        """This plan with the instances, summarizers, confirmations and histories of `other`
        added (a history only for an instance this plan has none for)."""
        mine = self.history_ids()
        return self.model_copy(update={
            "instances": _union(self.instances, other.instances),
            "summarizers": _union(self.summarizers, other.summarizers),
            "confirm": _union(self.confirm, other.confirm),
            "histories": (*self.histories,
                          *(found for found in other.histories if found.instance_id not in mine)),
        })


def _union(first: Iterable[Any], second: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys([*first, *second]))
