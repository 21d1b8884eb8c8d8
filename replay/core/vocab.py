"""The closed vocabularies of replay, one `StrEnum` each.

A member equals its string (`Arm.PRE == "pre"`, and it formats as `pre`), so stored rows, JSON
and printed tables keep the words they always had, while code that names a word by its member
cannot misspell it into a silent new value. Reading a stored word back is `Label(text)`: an
unknown word is an error, not a new label.
"""

from __future__ import annotations

from enum import StrEnum


class Arm(StrEnum):
    """The two runs of an instance: with the full history (PRE) or from a summary (POST)."""

    PRE = "pre"
    POST = "post"


class CellStatus(StrEnum):
    """A recorded cell: `done` (it has a verdict) or `error` (a fault; retried next run)."""

    DONE = "done"
    ERROR = "error"


class Label(StrEnum):
    """The label of an (instance, summarizer) pair (protocol step 7)."""

    PRESERVED = "preserved"
    DAMAGED = "damaged"
    RESCUED = "rescued"
    UNSOLVED = "unsolved"
    EXCLUDED = "excluded"
    UNEVALUATED = "unevaluated"
    ERROR = "error"


PRE_PASS = (Label.PRESERVED, Label.DAMAGED)  # the labels of pairs whose PRE passed


class Confirmation(StrEnum):
    """What three runs of a damaged pair say (protocol step 8)."""

    STABLE = "stable"
    SEED_VARIABLE = "seed-variable"
    PENDING = "pending"


class ValidationStatus(StrEnum):
    """The verdict on an instance before any model is called (protocol step 2)."""

    VALID = "valid"
    EXCLUDED = "excluded"
    ERROR = "error"


class ExitReason(StrEnum):
    """Why a continuation's loop stopped (`running` while it has not)."""

    RUNNING = "running"
    FINISHED = "finished"
    STEP_LIMIT = "step_limit"
    REFUSED = "refused"
    ERROR = "error"
    INVALID_SUMMARY = "invalid_summary"  # the summary broke its method's rules: nothing ran
    IMPORTED = "imported"  # a trajectory made elsewhere: its own loop's reason is not known


class Carrier(StrEnum):
    """How a summary re-enters the agent's context."""

    SUMMARY_ONLY = "summary-only"
    NATIVE = "native"


class ActionFormat(StrEnum):
    """How the agent speaks its actions: replay's tool calls, mini-swe-agent's text actions, or
    mini-swe-agent's bash tool calls (both of the latter end with its submit sentinel)."""

    TOOL_CALLS = "tool-calls"
    MINI_SWE_AGENT_TEXT = "mini-swe-agent-text"
    MINI_SWE_AGENT_TOOLS = "mini-swe-agent-tools"


class SweepKind(StrEnum):
    """What a sweep varies: the summarizer's backbone model, or the compaction prompt."""

    BACKBONE = "backbone"
    PROMPT = "prompt"


class HistorySource(StrEnum):
    """How a Phase A history was made: by running an agent, or from a trajectory made
    elsewhere (a stored history's `source` starts with this word)."""

    COLLECTED = "collected"
    IMPORTED = "imported"


class FaultKind(StrEnum):
    """Whose fault a failure is: the user's input, the harness's or machine's, or a bug."""

    INPUT = "input"
    HARNESS = "harness"
    BUG = "bug"
