"""The engine's building blocks below the jobs of `replay.api`, for benchmarks and tools that
time or build one stage (the scripts in `scripts/`): what is public here may be relied on, the
modules it comes from may move.

    environments  backends, a started environment (`environment`), recipes, snapshots, repos
    histories     Phase A records and their files, boundary rules, trajectories, collection
    models        specs, the call client and its cache, the scripted model (server) for tests
    agent         the continuation loop and its tools
    measures      retention's serializer, patterns and scores; probe files; validation
    store         the SQLite store
"""

from __future__ import annotations

from pathlib import Path

from replay.agent.loop import AgentConfig, run_agent
from replay.agent.tools import TOOLS
from replay.compaction.anchors import ERROR_TYPE, PATH_PATTERN, TEST_ID_PATTERN, URL_PATTERN
from replay.compaction.sources import PromptText
from replay.core.errors import HarnessError, InputError
from replay.core.paths import instances_dir
from replay.environments import snapshots
from replay.environments.backends import make_backend, open_backend
from replay.environments.base import Environment
from replay.environments.docker import DockerBackend
from replay.environments.local import LocalBackend
from replay.environments.recipes import load_recipe
from replay.environments.repos import commit_files, find_mirror, git
from replay.environments.snapshots import at_base
from replay.histories.boundaries import is_test_path, parse_rule
from replay.histories.collect import collect_trajectory
from replay.histories.importers import read_trajectory
from replay.histories.importers.rebuild import import_files
from replay.histories.records import (
    DIFF_FILE,
    HISTORY_FILE,
    bundled_history,
    history_record,
    load_history_file,
)
from replay.histories.trajectories import cut_history
from replay.instances.records import Instance, load_dataset, load_instance_dir, select
from replay.judge.validate import apply_patch, validate_instance
from replay.measures.chains import score_session
from replay.measures.details import serialize
from replay.measures.probes.files import PROBES_FILE, ProbeSet, evidence_problems
from replay.measures.retention import FUTURE_PAYLOADS, MAX_CHARS, Limits
from replay.measures.runs import LATER_FILE
from replay.measures.session_files import load_sessions
from replay.measures.sessions import Session
from replay.measures.validation import markdown_table
from replay.measures.validation import validate as validate_retention
from replay.models.cache import CallCache
from replay.models.client import ModelClient, settled
from replay.models.gguf import loaded, request_body
from replay.models.registry import resolve
from replay.models.scripted import ScriptedModel, ScriptedServer
from replay.models.scripts import Script
from replay.models.types import ChatRequest
from replay.records.history import History
from replay.store import Store
from replay.store.calls import seconds_total
from replay.store.continuations import find as kept_continuation
from replay.store.runs import all_cells
from replay.sweep.labels import label

__all__ = [
    "DIFF_FILE", "ERROR_TYPE", "FUTURE_PAYLOADS", "HISTORY_FILE", "LATER_FILE", "MAX_CHARS",
    "PATH_PATTERN", "PROBES_FILE", "TEST_ID_PATTERN", "TOOLS", "URL_PATTERN", "AgentConfig",
    "CallCache", "ChatRequest", "DockerBackend", "HarnessError", "History", "InputError",
    "Instance", "Limits", "LocalBackend", "ModelClient", "ProbeSet", "PromptText", "Script",
    "ScriptedModel", "ScriptedServer", "Session", "Store", "all_cells", "apply_patch",
    "at_base", "bundled_history", "collect_trajectory", "commit_files", "cut_history",
    "environment",
    "evidence_problems", "find_mirror", "git", "history_record", "import_files", "instances_dir",
    "is_test_path", "kept_continuation", "label", "load_dataset", "load_history_file",
    "load_instance_dir",
    "load_recipe", "load_sessions", "loaded", "make_backend", "markdown_table", "open_backend",
    "parse_rule", "read_trajectory", "request_body", "resolve", "run_agent", "score_session",
    "seconds_total", "select", "serialize", "settled", "snapshots", "validate_instance",
    "validate_retention",
]


def environment(instance: Instance, backend: str = "local", slot: int = 0,
                mirrors: Path | None = None) -> Environment:
    """The instance's environment on `backend` (built the first time), started in `slot`."""
    return make_backend(backend, mirrors).start(instance, load_recipe(instance, mirrors=mirrors),
                                                slot=slot)
