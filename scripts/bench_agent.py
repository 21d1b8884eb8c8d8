"""The continuation engine's own time per step, with a zero-latency scripted model.

    python scripts/bench_agent.py [--runs 15] [--steps 8]

Runs the agent on the demo suite's longest history through the real `ModelClient` (call cache
in SQLite, request hashing) with an in-process scripted model, and a real local environment.
The engine's time per step is the wall time minus tool execution and minus the scripted model's
own time; its median over the runs must stay under 20 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


class TimedModel:
    """A provider that times the scripted model it wraps (the baseline of the comparison)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.seconds = 0.0

    def complete(self, request: object, timeout: float) -> object:
        start = time.perf_counter()
        try:
            return self.inner.complete(request, timeout=timeout)  # type: ignore[attr-defined]
        finally:
            self.seconds += time.perf_counter() - start

    def close(self) -> None:
        """Nothing to release."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()

    from replay import api
    from replay.api.blocks import (
        AgentConfig,
        CallCache,
        ModelClient,
        Script,
        ScriptedModel,
        bundled_history,
        environment,
        run_agent,
    )

    instances = api.instances("demo")
    histories = [bundled_history(instance) for instance in instances]
    instance, history = max(zip(instances, histories, strict=True),
                            key=lambda pair: len(str(pair[1].messages)))
    env = environment(instance)
    env.restore(history.snapshot)
    call = {"function": {"name": "read_file", "arguments": {"path": "README.md"}}}
    turns = [{"content": "Reading again.", "tool_calls": [call]}]
    per_step, model_share = [], []
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as scratch, \
            CallCache(Path(scratch) / "replay.db") as cache:
        for run in range(args.runs):
            scripted = ScriptedModel(Script(turns, model="scripted"))
            timed = TimedModel(scripted)
            with ModelClient(scripted.spec, cache, provider=timed) as client:  # type: ignore[arg-type]
                kept = Path(scratch) / f"trace-{run}.json"  # saved each step, as a cell does
                start = time.perf_counter()
                trace = run_agent(client, env, history.messages,
                                  AgentConfig(max_steps=args.steps),
                                  lambda found, path=kept: found.save(path), seed_index=run)
                wall = time.perf_counter() - start
            tools = sum(action.seconds for action in trace.actions)
            engine = wall - tools - timed.seconds
            per_step.append(engine / trace.steps)
            model_share.append(timed.seconds / trace.steps)

    engine_ms = statistics.median(per_step) * 1000
    model_ms = statistics.median(model_share) * 1000
    print(f"history             {instance.instance_id}, {len(history.messages)} messages "
          f"({len(str(history.messages))} chars)")
    print(f"engine per step     median {engine_ms:.2f} ms over {args.runs} runs of "
          f"{args.steps} steps (min {min(per_step) * 1000:.2f}, max {max(per_step) * 1000:.2f})")
    print(f"scripted model      median {model_ms:.2f} ms per step (baseline, same process)")
    print(f"ratio               engine / scripted model = {engine_ms / model_ms:.2f}")
    print(f"under 20 ms         {'yes' if engine_ms < 20 else 'NO'}")
    return 0 if engine_ms < 20 else 1


if __name__ == "__main__":
    sys.exit(main())
