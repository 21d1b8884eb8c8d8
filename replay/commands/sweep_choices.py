"""Choices of the sweep commands: the default models of the main job and the histories."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from replay.histories.boundaries import parse_rule

# The main job's default model: the embedded GGUF model (models.toml), which needs no key.
DEFAULT_MODEL = "smollm2"
DefaultAgent = Annotated[str, typer.Option(
    help="The continuation agent: an alias or PROVIDER:MODEL[@URL][#KEY_ENV] (default the "
         "embedded model).")]
Backbones = Annotated[list[str] | None, typer.Option(
    "--model", help="Summarizer backbone: an alias or ad-hoc spec (repeatable; default the "
                    "embedded model).")]


@dataclass(frozen=True)
class HistoryChoice:
    """`--history` ids (or prefixes) and `--history-rule` (see `replay.sweep.histories`), and
    whether instances whose history does not fit the agent's context are left out (the default
    job: no instance named)."""

    ids: tuple[str, ...] = ()
    rule: str | None = None
    fit: bool = False

    @classmethod
    def parse(cls, ids: list[str] | None, rule: str | None, fit: bool = False) -> HistoryChoice:
        """The choice the command line gives; a malformed rule is bad input."""
        return cls(tuple(ids or ()), parse_rule(rule).text if rule else None, fit and not ids)


NO_CHOICE = HistoryChoice()  # each instance's history as `find_history` picks it
