"""Probe files: the follow-up questions that belong to a history, with the facts it established.

A probe file is JSON; it names its history by content id, so a probe never meets another history:

    {"instance_id": "replay-panel__buildlog-1", "history": "<sha256 of the history>",
     "cohort": "primary",
     "probes": [{"id": "link-error", "question": "What did the failed link step report?",
                 "fields": {"symbol": {"type": "string", "description": "the missing symbol"},
                            "targets": {"type": "array", "order_free": true,
                                        "description": "every target that failed"}},
                 "expected": {"symbol": "zstd_frame_guard_v2", "targets": ["a", "b"]}}]}

Field types: `string`, `integer`, `number` (a float: written with a decimal point), `boolean`,
`array` (ordered unless `order_free`), `object`. Each expected value has its field's type,
exactly: an integer is neither a boolean nor a number. The cohort (`primary`, `control`, ...)
is fixed in the file; results are reported per cohort.

A bundled history's probes are `probes.json` beside its `history.json`; `--probes` adds files
(or folders of them) for any history the store holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from replay.compaction.transcript import call_arguments, message_text, tool_calls
from replay.core.errors import InputError
from replay.core.input_paths import regular_files
from replay.instances.records import Instance
from replay.records.history import History

PROBES_FILE = "probes.json"
TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool,
                          "array": list, "object": dict}


class ProbeField(BaseModel):
    """One field of the answer: its JSON type, what it asks for, and whether order matters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["string", "integer", "number", "boolean", "array", "object"]
    description: str = Field(min_length=1)
    order_free: bool = False

    @model_validator(mode="after")
    def _order_free_arrays_only(self) -> ProbeField:
        if self.order_free and self.type != "array":
            raise ValueError("order_free applies to arrays only")
        return self


class Probe(BaseModel):
    """A follow-up question, its fields and the facts expected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    fields: dict[str, ProbeField] = Field(min_length=1)
    expected: dict[str, Any]

    @model_validator(mode="after")
    def _expected_matches_fields(self) -> Probe:
        if set(self.expected) != set(self.fields):
            raise ValueError(f"probe {self.id}: expected names {sorted(self.expected)}, "
                             f"fields {sorted(self.fields)}")
        for name, field in self.fields.items():
            value = self.expected[name]
            if type(value) is not TYPES[field.type]:
                raise ValueError(f"probe {self.id}: expected {name} is "
                                 f"{type(value).__name__}, not {field.type}")
        return self


class ProbeSet(BaseModel):
    """The probes of one history, and the cohort it is reported in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_id: str = Field(min_length=1)
    history: str = Field(pattern=r"^[0-9a-f]{64}$")
    cohort: str = Field(min_length=1)
    probes: list[Probe] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> ProbeSet:
        ids = [probe.id for probe in self.probes]
        if len(set(ids)) != len(ids):
            raise ValueError("probe ids repeat")
        return self


def load_probe_file(path: Path) -> ProbeSet:
    """Read and check one probe file; a malformed one is bad input in one line."""
    try:
        return ProbeSet.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise InputError(f"{path}: cannot read the probe file: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "file"
        message = first["msg"].removeprefix("Value error, ")
        raise InputError(f"{path}: not a probe file: {where}: {message}") from None


def read_probe_paths(paths: list[Path]) -> list[ProbeSet]:
    """Probe files named by `--probes`: files, or folders searched for `*.json`."""
    sets = []
    for path in paths:
        if path.is_dir():
            sets += [load_probe_file(found) for found in regular_files(path.rglob("*.json"))]
        elif path.is_file():
            sets.append(load_probe_file(path))
        else:
            raise InputError(f"--probes {path}: no such file or folder")
    return sets


def bundled_probes(instance: Instance) -> ProbeSet | None:
    """The probes that ship beside an instance's bundled history, if any."""
    if instance.bundle is None:
        return None
    path = instance.bundle / PROBES_FILE
    return load_probe_file(path) if path.is_file() else None


def probes_for(instance: Instance, history: History, given: list[ProbeSet]) -> ProbeSet | None:
    """The probes of the history a run continues `instance` from: a `--probes` file naming it,
    else the bundled one; a file for another history of the instance is refused."""
    history_id = history.content_id()
    mine = [found for found in given if found.instance_id == instance.instance_id]
    if len(mine) > 1:
        raise InputError(f"{len(mine)} probe files for {instance.instance_id}: give one")
    chosen = mine[0] if mine else bundled_probes(instance)
    if chosen is not None and chosen.history != history_id:
        raise InputError(f"the probes of {instance.instance_id} are for history "
                         f"{chosen.history[:12]}, but its history here is {history_id[:12]}")
    return chosen


def evidence_problems(found: ProbeSet, history: History) -> list[str]:
    """Expected facts a model could answer without the history's tool outputs, or that no tool
    output shows: a string must appear in a tool output and in no other message (the task, the
    agent's words and calls); a number or boolean must appear in a tool output as text."""
    tools = [message_text(m) for m in history.messages if m.get("role") == "tool"]
    others = "\n".join(message_text(m) + "".join(call_arguments(c) for c in tool_calls(m))
                       for m in history.messages if m.get("role") != "tool")
    problems = []
    for probe in found.probes:
        for name, value in probe.expected.items():
            for leaf in leaves(value):
                text = json.dumps(leaf) if isinstance(leaf, bool) else str(leaf)
                where = f"{found.instance_id} {probe.id}.{name} {text}"
                if not any(text.lower() in tool.lower() if isinstance(leaf, bool)
                           else text in tool for tool in tools):
                    problems.append(f"{where}: in no tool output")
                elif isinstance(leaf, str) and leaf in others:
                    problems.append(f"{where}: also outside the tool outputs")
    return problems


def leaves(value: Any) -> list[Any]:
    """The scalar values inside nested objects and arrays, in order."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]
