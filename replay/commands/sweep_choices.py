"""Choices of the sweep commands: the default models of the main job."""

from __future__ import annotations

from typing import Annotated

import typer

# The main job's default model: the embedded GGUF model (models.toml), which needs no key.
DEFAULT_MODEL = "smollm2"
DefaultAgent = Annotated[str, typer.Option(
    help="The continuation agent: an alias or PROVIDER:MODEL[@URL][#KEY_ENV] (default the "
         "embedded model).")]
Backbones = Annotated[list[str] | None, typer.Option(
    "--model", help="Summarizer backbone: an alias or ad-hoc spec (repeatable; default the "
                    "embedded model).")]
