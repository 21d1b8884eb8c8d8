"""Trajectory importers, one module per format, chosen by name and imported only when used.

`read_trajectory(path)` reads a file, recognizes its format (or takes the one given) and converts
it to a `Recorded` trajectory in the project's history format. A file that is not JSON, in no
known format, or not what its format promises is bad input, reported in one line.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

from replay.core.errors import InputError
from replay.histories.importers.recorded import Recorded

MODULES = {"mini-swe-agent": "mini_swe_agent", "swe-agent": "swe_agent",
           "openai": "openai_messages"}
FORMATS = tuple(MODULES)


MINI_INFO = ("mini_version", "exit_status", "submission", "model_stats")
_BLOCK = re.compile(r"```(?:mswea_bash_command|bash)[ \t]*\n")


def detect_format(data: Any) -> str | None:
    """The format a decoded trajectory file is in, or None when it is none of them.

    mini-swe-agent files from before v1.4 name neither their format nor their version; they
    are told from plain message lists by their run info (exit status, submission, model
    stats) or, for a bare list, by text actions answered with `<returncode>` observations.
    """
    if isinstance(data, list):
        if not data or not all(isinstance(m, dict) and "role" in m for m in data):
            return None
        return "mini-swe-agent" if _text_actions(data) else "openai"
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("trajectory"), list):
        return "swe-agent"
    if not isinstance(data.get("messages"), list):
        return None
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    if str(data.get("trajectory_format", "")).startswith("mini-swe-agent") or \
            any(key in info for key in MINI_INFO) or _text_actions(data["messages"]):
        return "mini-swe-agent"
    return "openai"


def _text_actions(messages: list[Any]) -> bool:
    """Whether messages read as mini-swe-agent's text mode: a bash block in an assistant
    message, a `<returncode>` in the user message after it, and no tool call anywhere."""
    texts = [(m.get("role"), str(m.get("content") or "")) for m in messages
             if isinstance(m, dict)]
    if any(isinstance(m, dict) and m.get("tool_calls") for m in messages):
        return False
    return any(role == "assistant" and _BLOCK.search(text) and after[0] == "user"
               and "<returncode>" in after[1]
               for (role, text), after in zip(texts, texts[1:], strict=False))


def read_trajectory(path: Path, fmt: str = "auto") -> Recorded:
    """Read and convert one trajectory file; `fmt` is `auto` or one of FORMATS."""
    if fmt != "auto" and fmt not in MODULES:
        raise InputError(f"unknown trajectory format {fmt!r}: use auto or {', '.join(FORMATS)}")
    data = _load(path)
    name = detect_format(data) if fmt == "auto" else fmt
    if name is None:
        raise InputError(f"{path}: unknown trajectory format (expected {', '.join(FORMATS)}; "
                         "see docs/histories.md)")
    module = importlib.import_module(f"replay.histories.importers.{MODULES[name]}")
    try:
        recorded: Recorded = module.parse(data, path)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        raise InputError(f"{path}: not a valid {name} trajectory ({type(exc).__name__}: "
                         f"{exc})".splitlines()[0]) from None
    if not recorded.steps:
        raise InputError(f"{path}: the trajectory has no steps (no assistant message)")
    return recorded


def name_hint(path: Path) -> str:
    """The instance id a file's name suggests (`<id>.traj`, `<id>.traj.json`, `<id>.json`)."""
    name = path.name
    for suffix in (".json", ".traj"):
        name = name.removesuffix(suffix)
    return name


def _load(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
