"""The jobs before a sweep: instances, production prompts, validation, Phase A histories
(collected by running an agent, or imported from trajectories users already have)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from replay.agent.loop import AgentConfig
from replay.api.listen import SILENT, Listener
from replay.compaction.registry_fetch import NPM_REGISTRY, PYPI_INDEX
from replay.compaction.sources import PromptText, cache_status, load_sources, select
from replay.compaction.sync import registry_client, sync_prompt
from replay.core.errors import HarnessError, InputError
from replay.environments.backends import make_backend, open_backend
from replay.histories.boundaries import Rule, parse_rule
from replay.histories.collect import Collected, collect_trajectory, is_collected
from replay.histories.importers.rebuild import Imported, check_files, import_files
from replay.histories.records import bundled_snapshot
from replay.histories.trajectories import cut_history
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.judge.validate import preflight, validate_all
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.keys import api_key
from replay.models.registry import resolve
from replay.pipeline.continuation import model_id
from replay.records.history import History
from replay.records.trajectory import Trajectory
from replay.records.validation import Validation
from replay.store import Store
from replay.store.histories import keep


def instances(suite: str = "demo", dataset: str | None = None, ids: Sequence[str] = (),
              pattern: str | None = None, span: str | None = None) -> list[Instance]:
    """A suite's instances (a bundled name or a folder holding a suite.toml), narrowed by id,
    by a regex on ids (`pattern`) and by a `START:STOP` slice (`span`)."""
    return choose_instances(suite, dataset, list(ids), pattern, span)


def boundaries(rules: Sequence[str | Rule]) -> list[Rule]:
    """Boundary rules (`steps:6`, `before-edit`, `tokens:60000`, ...), parsed; a malformed one
    is bad input."""
    return [rule if isinstance(rule, Rule) else parse_rule(rule) for rule in rules]


def sync_prompts(names: Sequence[str] | None = None, *, force: bool = False,
                 sources: Path | None = None, npm_registry: str = NPM_REGISTRY,
                 pypi_index: str = PYPI_INDEX, listener: Listener = SILENT) -> list[PromptText]:
    """Fetch, check and cache the named production prompts (all when `names` is empty).

    Prompts already cached with their pinned hashes are skipped unless `force`. Raises
    `InputError` when a registry cannot be reached, a digest or a text hash differs from its
    pin, or a name is unknown."""
    catalogue = load_sources(sources)
    selected = [select(catalogue, name) for name in names] if names else list(catalogue.values())
    synced: list[PromptText] = []
    with registry_client() as client:
        for source in selected:
            _, found = cache_status(source)
            if found is not None and not force:
                listener.note(f"{source.name}: already synced ({source.spec})")
                synced.append(found)
                continue
            started = time.monotonic()
            with listener.busy(f"{source.name}: fetching {source.spec}"):
                found = sync_prompt(client, source, npm_registry, pypi_index)
            sizes = " + ".join(str(len(text)) for text in found.parts.values())
            listener.note(f"{source.name}: synced {source.spec}, {sizes} chars, hash ok "
                          f"({time.monotonic() - started:.1f} s)")
            synced.append(found)
    return synced


def prompt(name: str, sources: Path | None = None, listener: Listener = SILENT) -> PromptText:
    """A production prompt from the local cache, synced first when missing or stale."""
    status, found = cache_status(select(load_sources(sources), name))
    if found is not None and status == "synced":
        return found
    return sync_prompts([name], sources=sources, listener=listener)[0]


def validate(chosen: Sequence[Instance], store: Path, *, mirrors: Path | None = None,
             backend: str = "local", base_image: str | None = None, rebuild: bool = False,
             test_timeout: float | None = None,
             on_result: Callable[[Validation], None] = lambda _: None) -> list[Validation]:
    """Validate instances (solvable, a real repair, restorable), recording each verdict in the
    store and handing it to `on_result` once made. Each test run may take `test_timeout`
    seconds (default DEFAULT_TEST_TIMEOUT); `rebuild` builds environments again."""
    preflight(chosen, mirrors)
    results = []
    with open_backend(backend, mirrors, base_image) as opened, Store.open(store) as kept:
        for validation in validate_all(chosen, opened, kept, bundled_snapshot, rebuild=rebuild,
                                       test_timeout=test_timeout):
            on_result(validation)
            results.append(validation)
    return results


@dataclass(frozen=True)
class Collection:
    """What `collect` made: a result per instance, the histories cut (with the ids of those
    new to the store), and a line per (trajectory, rule) that did not land."""

    results: list[Collected]
    histories: list[History]
    fresh: set[str]
    missed: list[str] = field(default_factory=list)

    @property
    def code(self) -> int:
        """0 when every trajectory was collected and every rule landed, else 1."""
        return 1 if self.missed or any(result.error for result in self.results) else 0


def collect(chosen: Sequence[Instance], model: str, cuts: Sequence[str | Rule], store: Path, *,
            max_steps: int = 30, temperature: float = 0.0, seed_index: int = 0,
            mirrors: Path | None = None, call_deadline: float | None = None,
            test_timeout: float | None = None,
            on_collected: Callable[[Collected], None] = lambda _: None) -> Collection:
    """Run the agent `model` from the start of each task (or find its trajectory kept in the
    store), then cut each boundary rule of `cuts` from each trajectory. Raises `Halt` for a
    refused key or an unreachable endpoint."""
    rules = boundaries(cuts)
    config = AgentConfig(max_steps=max_steps, temperature=temperature)
    spec = resolve(model)
    identity = model_id(spec)
    with Store.peek(store) as seen:  # bad input is refused before the store is written
        missing = [i for i in chosen if not is_collected(seen, i, identity, config, seed_index)]
    if missing:
        api_key(spec)
        preflight(missing)
    with Store.open(store) as kept, CallCache(store) as cache:
        backend = make_backend("local", mirrors)
        results = []
        with ModelClient(spec, cache, deadline=call_deadline) as client:
            for instance in chosen:
                result = collect_trajectory(instance, backend, client, identity, spec.alias,
                                            config, kept, seed_index, test_timeout)
                on_collected(result)
                results.append(result)
        trajectories = [r.trajectory for r in results if r.trajectory is not None]
        histories, missed = _cut(trajectories, rules)
        fresh = keep(kept, histories)
    return Collection(results, histories, fresh, missed)


def _cut(trajectories: Sequence[Trajectory],
         rules: Sequence[Rule]) -> tuple[list[History], list[str]]:
    histories, missed = [], []
    for trajectory in trajectories:
        for rule in rules:
            try:
                histories.append(cut_history(trajectory, rule))
            except InputError as exc:
                missed.append(f"  {rule.text:<14} no history: {exc}")
    return histories, missed


@dataclass(frozen=True)
class Imports:
    """What `import_histories` made, with the ids of the histories new to the store; `fault`
    names the harness fault that stopped it, if one did."""

    imported: list[Imported]
    fresh: set[str]
    fault: str | None = None


def import_histories(paths: Sequence[Path], cuts: Sequence[str | Rule],
                     known: Sequence[Instance], store: Path, *, fmt: str = "auto",
                     instance_id: str | None = None, mirrors: Path | None = None,
                     test_timeout: float | None = None) -> Imports:
    """Phase A histories from trajectory files (mini-swe-agent, SWE-agent, OpenAI messages),
    re-executed to rebuild each snapshot, cut at each boundary rule of `cuts`. The files are
    read and checked before the store is opened (or created)."""
    rules = boundaries(cuts)
    check_files(paths, rules, known, fmt, instance_id)
    with Store.open(store) as kept:
        try:
            imported, fresh = import_files(paths, rules, known, make_backend("local", mirrors),
                                           kept, fmt, instance_id, test_timeout)
        except HarnessError as exc:
            return Imports([], set(), f"{type(exc).__name__}: {exc}")
    return Imports(imported, fresh)
