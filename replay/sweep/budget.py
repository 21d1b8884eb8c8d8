"""`--budget DOLLARS`: a sweep command starts no new cell once what it has spent so far plus
the estimates of the cells in flight (and of the cell about to start) would pass the budget.

The estimate of a cell is the dry run's (an upper bound: every step taken, every summary of full
length; `replay.sweep.execution.task_estimate`); what a finished cell spent is what its model
calls cost at the models' list prices (a model with no price counts $0). Once one cell is kept
from starting, no later one starts: the command ends with the cells done kept, exit 1. Shared by
the worker threads of a local executor, so every method holds a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from replay.records.cell import CellId, CellResult


class Budget:
    """The dollars one sweep command may spend on model calls, and what it has spent."""

    def __init__(self, dollars: float) -> None:
        self.dollars = dollars
        self.spent = 0.0
        self.stopped = False
        self._estimates: dict[CellId, float] = {}
        self._in_flight: dict[CellId, float] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(cls, dollars: float | None) -> Budget | None:
        """The budget of `--budget DOLLARS`; None without one."""
        return None if dollars is None else cls(dollars)

    def expect(self, estimates: Mapping[CellId, float]) -> None:
        """The estimated cost of the cells about to be handed to the executor."""
        with self._lock:
            self._estimates.update(estimates)

    def admit(self, cell: CellId) -> bool:
        """Whether `cell` may start: spent + in flight + its estimate within the budget."""
        with self._lock:
            cost = self._estimates.get(cell, 0.0)
            if self.stopped or self.spent + sum(self._in_flight.values()) + cost > self.dollars:
                self.stopped = True
                return False
            self._in_flight[cell] = cost
            return True

    def settle(self, result: CellResult) -> None:
        """A cell that started is back: its estimate leaves the flight, its spend counts."""
        with self._lock:
            self._in_flight.pop(result.cell, None)
            self.spent += result.spent.cost

    def line(self, unstarted: int) -> str:
        """The one line a command prints when the budget kept cells from starting."""
        return (f"budget ${self.dollars:.2f} reached: spent ${self.spent:.4f}, {unstarted} "
                "cell(s) not started (the cells done are kept; run the same command with a "
                "larger --budget to go on)")
