"""A worker: one environment slot, warm environments, gated model clients.

A worker owns one environment slot (`backend.start(..., slot=k)`), so no two workers share a
working tree; it keeps each instance's environment warm and every continuation restores the
snapshot first. Model calls go through one gate per provider endpoint, which bounds how many are
in flight at once across the workers that share the gates, and through one breaker: once it has
tripped (an endpoint unreachable, a key refused) every model call fails at once, and a task that
ended in an error is returned as `halted`, to be neither recorded nor labelled.

A worker writes summaries, continuations and model calls to its store. A remote worker's store
is a scratch store on its own node (`<replay home>/ray-node/`, which also serves as that node's
model call cache); it sends back what the driver needs (`replay.sweep.exports`) and the driver
writes it into the run's store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from replay.core.errors import Fault
from replay.core.paths import home
from replay.core.vocab import CellStatus, ValidationStatus
from replay.environments.backends import close_backend, make_backend
from replay.environments.base import Environment
from replay.environments.recipes import Recipe, load_recipe
from replay.instances.records import Instance
from replay.judge.validate import validate_instance
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.retry import Breaker, RetryNotice
from replay.models.transport import ModelRefused
from replay.models.types import ChatRequest, ModelSpec
from replay.pipeline.cell import CellTask, run_cell
from replay.records.cell import CellResult
from replay.records.reply import ChatResponse
from replay.records.spend import Spend
from replay.records.validation import Validation
from replay.store import Store, validations
from replay.sweep.exports import Called, Export
from replay.sweep.run import Run, ValidateTask

Task = CellTask | ValidateTask


@dataclass
class Finished:
    """A task's result (a cell's, or an instance's validation) and, from a remote worker, its
    export. `halted` is the fault that stopped the command when it interrupted the task, and
    `unstarted` says the budget kept the task from starting: such results are not recorded.
    `unrecorded` marks a validation no worker recorded (its worker failed): the driver does."""

    result: CellResult | Validation
    export: Export | None = None  # a remote worker's (see `replay.sweep.exports`)
    halted: str | None = None
    unstarted: bool = False
    unrecorded: bool = False


class Gates:
    """One semaphore per provider endpoint, `limit` calls in flight on each."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._gates: dict[str, threading.Semaphore] = {}
        self._lock = threading.Lock()

    def __call__(self, spec: ModelSpec) -> threading.Semaphore:
        with self._lock:
            return self._gates.setdefault(spec.base_url, threading.Semaphore(self.limit))


class Metered:
    """A model client behind its provider's gate that counts new spend (and keeps the calls):
    tokens, the part of the prompts read from and written to the provider's prompt cache, cost,
    what prompt caching saved, and the call with its seconds (`ChatResponse.latency`, the time
    in the client, not the wait for the gate). Replies replayed from the call cache count
    nothing, not even as a call."""

    def __init__(self, client: ModelClient, gate: threading.Semaphore,
                 spent: Spend, calls: list[Called] | None) -> None:
        self.client = client
        self.gate = gate
        self.spent = spent
        self.calls = calls

    def complete(self, request: ChatRequest, seed_index: int = 0) -> ChatResponse:
        """The client's reply, counted when it did not come from the cache."""
        try:
            with self.gate:
                response = self.client.complete(request, seed_index)
        except ModelRefused as refused:
            if self.calls is not None:
                self.calls.append(Called(self.client.spec, request, seed_index, refused))
            raise
        if not response.from_cache:
            usage = response.usage
            self.spent.add(Spend(usage.input_tokens, usage.output_tokens, usage.cached_tokens,
                                 usage.cache_write_tokens, response.cost,
                                 self.client.spec.saving(usage), calls=1,
                                 call_seconds=response.latency or 0.0))
        if self.calls is not None:
            self.calls.append(Called(self.client.spec, request, seed_index, response))
        return response


class Worker:
    """Runs the tasks of a run in one environment slot, keeping each instance's environment
    warm, on the run's backend with its options.

    `breaker` is shared with the other workers of this process (its own when None);
    `on_retry(task, notice)` hears of each model call retried for a task. A `remote` worker
    writes to a scratch store on its node, and `calls` holds the model calls of the last cell
    it ran (what it exports).
    """

    def __init__(self, run: Run, slot: int, gates: Gates, remote: bool = False,
                 breaker: Breaker | None = None,
                 on_retry: Callable[[Task, RetryNotice], None] | None = None) -> None:
        self.settings = run.settings
        self.options = run.options
        self.slot = slot
        self.gates = gates
        self.keep_calls = remote
        self.calls: list[Called] = []
        self.breaker = breaker or Breaker()
        self.on_retry = on_retry
        self.task: Task | None = None
        self.backend = make_backend(run.plan.backend, run.options.mirrors,
                                    run.options.base_image)
        path = home() / "ray-node" / "replay.db" if remote else run.options.store
        self.store = Store.open(path)
        self.cache = CallCache(path)
        self.clients: dict[ModelSpec, ModelClient] = {}
        self.environments: dict[str, tuple[Environment, Recipe]] = {}

    def run(self, task: CellTask) -> Finished:
        """Run one cell; a fault is recorded in its result, never raised."""
        self.task = task
        spent = Spend()
        self.calls = []
        calls = self.calls if self.keep_calls else None

        def model(spec: ModelSpec) -> Metered:
            if spec not in self.clients:
                self.clients[spec] = ModelClient(
                    spec, self.cache, deadline=self.options.call_deadline, breaker=self.breaker,
                    on_retry=self._retrying if self.on_retry else None)
            return Metered(self.clients[spec], self.gates(spec), spent, calls)

        result = replace(run_cell(task, self.settings, self.store, self._environment, model),
                         spent=spent)
        halted = self.breaker.tripped if result.status == CellStatus.ERROR else None
        return Finished(result, halted=halted)

    def validate(self, task: ValidateTask) -> Finished:
        """Validate one instance (protocol step 2), recording the verdict in the worker's
        store; a fault is recorded in the verdict, never raised."""
        ident = task.instance.instance_id
        try:
            validation = validate_instance(task.instance, _Slot(self.backend, self.slot),
                                           self.store, boundary=task.boundary,
                                           test_timeout=task.test_timeout)
        except Exception as exc:  # a gold patch that does not apply, a bug: not a verdict
            validation = Validation(ident, ValidationStatus.ERROR,
                                    [f"validation failed: {Fault.of(exc).text()}"])
            validations.keep(self.store, self.backend.name, validation)
        return Finished(validation)

    def perform(self, task: Task) -> Finished:
        """Run a cell or validate an instance, as `task` asks."""
        return self.validate(task) if isinstance(task, ValidateTask) else self.run(task)

    def close(self) -> None:
        """Close clients, the store and the backend (local environments stay built on disk)."""
        for client in self.clients.values():
            client.close()
        self.cache.close()
        self.store.close()
        close_backend(self.backend)

    def _retrying(self, notice: RetryNotice) -> None:
        if self.on_retry is not None and self.task is not None:
            self.on_retry(self.task, notice)

    def _environment(self, instance: Instance) -> tuple[Environment, Recipe]:
        if instance.instance_id not in self.environments:
            recipe = load_recipe(instance, mirrors=self.backend.mirrors)
            env = self.backend.start(instance, recipe, slot=self.slot)
            self.environments[instance.instance_id] = (env, recipe)
        return self.environments[instance.instance_id]


class _Slot:
    """A backend whose `start` uses one slot (what validation expects of a backend)."""

    def __init__(self, backend: Any, slot: int) -> None:
        self.backend = backend
        self.slot = slot
        self.name = backend.name
        self.mirrors = backend.mirrors

    def start(self, instance: Any, recipe: Recipe, rebuild: bool = False) -> Any:
        return self.backend.start(instance, recipe, rebuild=rebuild, slot=self.slot)
