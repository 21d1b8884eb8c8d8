"""Executors: run a sweep's tasks on N workers (see `replay.sweep.workers`), here or on Ray.

`LocalExecutor` runs the workers as threads of this process, writing to the run's store.
`RayExecutor` runs them as Ray actors on a cluster (or a local Ray instance); each actor writes
only to a scratch store on its node and returns exports that the driver writes, so the driver
alone writes the run's store. Both yield the same events, and a plan gives the same table on
either.

Events are ("started", task, None), ("retrying", task, RetryNotice) (local workers only: a model
call of the task failed and is being retried) and ("finished", task, Finished). Once a task comes
back `halted` (an endpoint unreachable, a key refused), no other task starts: each comes back at
once, `halted` too.
"""

from __future__ import annotations

import importlib.util
import queue
import threading
from collections.abc import Iterator
from typing import Any

from replay.core.errors import Fault, Halt, InputError
from replay.core.vocab import CellStatus, FaultKind, ValidationStatus
from replay.models.retry import Breaker
from replay.records.cell import CellResult
from replay.records.validation import Validation
from replay.sweep.budget import Budget
from replay.sweep.exports import cell_export, validation_export
from replay.sweep.run import Run, ValidateTask
from replay.sweep.workers import Finished, Gates, Task, Worker

EXECUTORS = ("local", "ray")
NOT_STARTED = Fault(FaultKind.HARNESS, "", "not started: over the budget")  # never recorded


class LocalExecutor:
    """N worker threads in this process (the run's `workers`), each with its own slot, kept for
    the executor's life, keeping to the run's budget if it has one."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.workers = run.options.workers
        self.budget = run.options.spending
        self.gates = Gates(run.options.per_provider)
        self.breaker = Breaker()
        self._todo: queue.Queue[Task | None] = queue.Queue()
        self._events: queue.Queue[tuple[str, Any, Any]] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._busy: set[int] = set()  # slots whose thread is in a task

    def map(self, tasks: list[Task]) -> Iterator[tuple[str, Task, Any]]:
        """Run `tasks`, yielding the events of the module docstring."""
        if not self._threads:
            self._threads = [threading.Thread(target=self._serve, args=(slot,), daemon=True,
                                              name=f"replay-worker-{slot}")
                             for slot in range(self.workers)]
            for thread in self._threads:
                thread.start()
        for task in tasks:
            self._todo.put(task)
        finished = 0
        while finished < len(tasks):
            kind, task, payload = self._events.get()
            if kind == "broken":
                raise payload
            finished += kind == "finished"
            yield kind, task, payload

    def close(self) -> None:
        """Drop the tasks not started and stop the threads. Threads not in a task are waited for,
        so their workers close (environments, slot leases); one still in a task (Ctrl-C) stops
        once it is done, or dies with the process."""
        while True:
            try:
                self._todo.get_nowait()
            except queue.Empty:
                break
        for _ in self._threads:
            self._todo.put(None)
        for slot, thread in enumerate(self._threads):
            if slot not in self._busy:
                thread.join()

    def _serve(self, slot: int) -> None:
        try:
            worker = Worker(self.run, slot, self.gates, breaker=self.breaker,
                            on_retry=lambda task, notice: self._events.put(
                                ("retrying", task, notice)))
        except BaseException as exc:  # surfaced in the driver's thread by map()
            self._events.put(("broken", None, exc))
            return
        try:
            while (task := self._todo.get()) is not None:
                if self.breaker.tripped is not None:
                    self._events.put(("finished", task, fault(task, Halt(self.breaker.tripped))))
                    continue
                if not admitted(self.budget, task):
                    self._events.put(("finished", task, unstarted(task)))
                    continue
                self._events.put(("started", task, None))
                self._busy.add(slot)
                try:
                    finished = worker.perform(task)
                except Exception as exc:  # a fault outside the cell's own guard
                    finished = fault(task, exc)
                finally:
                    self._busy.discard(slot)
                settle(self.budget, finished)
                self._events.put(("finished", task, finished))
        finally:
            worker.close()


class RayWorker:
    """A worker as a Ray actor: scratch store on its node, exports for the driver."""

    def __init__(self, run: Run, slot: int) -> None:
        self.worker = Worker(run, slot, Gates(run.options.per_provider), remote=True)

    def run(self, task: Task) -> Finished:
        """Run the task on this node; what the driver must write comes back as its export."""
        finished = self.worker.perform(task)
        store, result = self.worker.store, finished.result
        finished.export = (validation_export(store, result) if isinstance(result, Validation)
                           else cell_export(store, result, self.worker.calls))
        return finished


class RayExecutor:
    """The run's `workers` `RayWorker` actors on the cluster at its `ray_address` (a local Ray
    instance when None), keeping to the run's budget if it has one. Each actor gets the run.

    Uses the Ray runtime already initialized in this process if there is one.
    """

    def __init__(self, run: Run) -> None:
        import ray

        self.ray = ray
        self.run = run
        self.budget = run.options.spending
        address = run.options.ray_address
        self._owns = not ray.is_initialized()
        if self._owns:
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         logging_level="ERROR")
            except ConnectionError as exc:
                raise InputError(f"cannot reach the Ray cluster at {address}: {exc}") from None
        self._actor = ray.remote(num_cpus=1)(RayWorker)
        self.actors = [self._actor.remote(run, slot) for slot in range(run.options.workers)]

    def map(self, tasks: list[Task]) -> Iterator[tuple[str, Task, Any]]:
        """Run `tasks` on the actors; yields the same events as `LocalExecutor.map` (but no
        "retrying": the actors log retries on their nodes)."""
        todo = list(tasks)
        idle = list(enumerate(self.actors))
        running: dict[Any, tuple[int, Any, Task]] = {}
        halted: str | None = None
        while todo or running:
            if halted is not None:
                for task in todo:
                    yield "finished", task, fault(task, Halt(halted))
                todo = []
                if not running:
                    return
            while todo and idle:
                task = todo.pop(0)
                if not admitted(self.budget, task):
                    yield "finished", task, unstarted(task)
                    continue
                slot, actor = idle.pop(0)
                running[actor.run.remote(task)] = (slot, actor, task)
                yield "started", task, None
            if not running:
                return
            ready, _ = self.ray.wait(list(running), num_returns=1)
            slot, actor, task = running.pop(ready[0])
            try:
                finished = self.ray.get(ready[0])
            except self.ray.exceptions.RayError as exc:  # the actor or its node failed
                finished = fault(task, exc)
                self.ray.kill(actor)
                actor = self.actors[slot] = self._actor.remote(self.run, slot)
            idle.append((slot, actor))
            settle(self.budget, finished)
            halted = halted or finished.halted
            yield "finished", task, finished

    def close(self) -> None:
        """Stop the actors, and the Ray runtime if this executor started it."""
        for actor in self.actors:
            self.ray.kill(actor)
        if self._owns:
            self.ray.shutdown()


def fault(task: Task, exc: BaseException) -> Finished:
    """The result of a task whose worker itself failed, or that a `Halt` kept from running."""
    halted = str(exc) if isinstance(exc, Halt) else None
    if isinstance(task, ValidateTask):
        return Finished(Validation(task.instance.instance_id, ValidationStatus.ERROR,
                                   [f"harness fault: {Fault.of(exc).text()}"]), halted=halted,
                        unrecorded=True)
    return Finished(CellResult(task.cell, CellStatus.ERROR, fault=Fault.of(exc)), halted=halted)


def admitted(budget: Budget | None, task: Task) -> bool:
    """Whether the budget (if any) lets `task` start; validations always start."""
    return budget is None or isinstance(task, ValidateTask) or budget.admit(task.cell)


def settle(budget: Budget | None, finished: Finished) -> None:
    """Count a finished cell's spend against the budget (if any)."""
    if budget is not None and isinstance(finished.result, CellResult):
        budget.settle(finished.result)


def unstarted(task: Task) -> Finished:
    """A cell the budget kept from starting: not to be recorded."""
    assert not isinstance(task, ValidateTask)
    return Finished(CellResult(task.cell, CellStatus.ERROR, fault=NOT_STARTED),
                    unstarted=True)


def check_executor(name: str, address: str | None = None) -> None:
    """Bad input unless `name` is an executor this machine can start with `address`."""
    if name not in EXECUTORS:
        raise InputError(f"unknown executor {name!r}: use one of {', '.join(EXECUTORS)}")
    if name == "local" and address:
        raise InputError("--ray-address needs --executor ray")
    if name == "ray" and importlib.util.find_spec("ray") is None:
        raise InputError("--executor ray needs the `ray` package: pip install ray")


def make_executor(run: Run) -> LocalExecutor | RayExecutor:
    """The executor the run's options name (see EXECUTORS), for its workers and budget."""
    check_executor(run.options.executor, run.options.ray_address)
    if run.options.executor == "local":
        return LocalExecutor(run)
    try:
        return RayExecutor(run)
    except ImportError:
        raise InputError("--executor ray needs the `ray` package: pip install ray") from None
