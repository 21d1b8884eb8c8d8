"""The kinds of failure the engine tells apart.

`InputError` is the user's: bad input that the command line reports in one line with exit code 2.
`HarnessError` is ours or the machine's (a crashed environment, an API fault, a timeout of the
harness itself): it marks a cell `error` and is never turned into a label.
`Halt` is a fault no further work can get past (a model endpoint that cannot be reached, an API
key the server refuses): the command stops in one line with exit code 2 and records nothing from
the work it interrupted.
A `Fault` is a failure kept as data: its kind, class, message, stage and traceback.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass

from replay.core.vocab import FaultKind


class ReplayError(Exception):
    """Base class of the engine's own exceptions."""


class InputError(ReplayError):
    """Bad input: a malformed file, an unknown id, a patch that does not apply, a missing key."""


class HarnessError(ReplayError):
    """A fault of the harness or the machine; the work it interrupted is retried later."""


class Halt(ReplayError):
    """A fault that every further model call would meet again: the command stops (exit 2), and
    the work it interrupted is neither recorded nor labelled; work finished before stays."""


class EnvironmentFault(HarnessError):
    """An environment could not run a command (crashed, vanished, refused)."""


class SnapshotMismatch(HarnessError):
    """A restored tree does not have the fingerprint its snapshot recorded."""


@dataclass(frozen=True)
class Fault:
    """A failure as data: whose fault it is (`kind`), the exception's class (`name`), its
    message, the stage it interrupted (`stage`, e.g. `summarizer`; "" for the cell's own run)
    and the traceback's text. A cell that failed keeps one; it is stored as JSON (`to_json`).

    `text()` is the line the command line and the report print, `KIND: CLASS: [STAGE: ]MESSAGE`;
    `from_text` reads that line back, as stores written before faults were records keep it.
    """

    kind: FaultKind
    name: str
    message: str
    stage: str = ""
    traceback: str = ""

    @classmethod
    def of(cls, exc: BaseException, stage: str = "", *, limit: int = 8) -> Fault:
        """The fault `exc` is, raised in `stage`, with (at most `limit` frames of) its
        traceback when it was raised."""
        kind = (FaultKind.HARNESS if isinstance(exc, HarnessError)
                else FaultKind.INPUT if isinstance(exc, InputError) else FaultKind.BUG)
        frames = traceback.format_exception(exc, limit=limit) if exc.__traceback__ else []
        return cls(kind, type(exc).__name__, str(exc), stage, "".join(frames))

    @property
    def detail(self) -> str:
        """The message with its stage: `summarizer: MESSAGE`, or the message alone."""
        return f"{self.stage}: {self.message}" if self.stage else self.message

    def text(self) -> str:
        """`KIND: CLASS: [STAGE: ]MESSAGE` (a fault with no class: `KIND: MESSAGE`)."""
        return f"{self.kind}: " + (f"{self.name}: " if self.name else "") + self.detail

    def to_json(self) -> dict[str, str]:
        """The fault as it is stored."""
        return {"kind": self.kind, "name": self.name, "message": self.message,
                "stage": self.stage, "traceback": self.traceback}

    @classmethod
    def from_json(cls, data: dict[str, str]) -> Fault:
        """The fault `to_json` wrote."""
        return cls(FaultKind(data["kind"]), data["name"], data["message"], data.get("stage", ""),
                   data.get("traceback", ""))

    @classmethod
    def from_text(cls, text: str, traceback: str = "") -> Fault:
        """The fault a stored error line says (see `text`). Lines that name no kind (a
        continuation's harness fault was kept as `CLASS: MESSAGE`) are the harness's."""
        head, _, rest = text.partition(": ")
        if head not in set(FaultKind):
            head, rest = FaultKind.HARNESS, text
        named = _NAMED.fullmatch(rest)
        name, rest = (named["name"], named["rest"] or "") if named else ("", rest)
        stage, _, message = rest.partition(": ")
        if stage not in STAGES:
            stage, message = "", rest
        return cls(FaultKind(head), name, message, stage, traceback)


STAGES = ("summarizer", "agent request")  # the stages a cell's fault may name
_NAMED = re.compile(r"(?P<name>[A-Z][A-Za-z0-9_]*)(?:: (?P<rest>.*))?", re.S)  # CLASS: REST
