"""Run Hermes' real `ContextCompressor._generate_summary` once, inside Hermes' own venv.

This file is run as a script by that venv's Python (`replay.compaction.hermes_native` starts
it); it imports nothing of replay. It reads one JSON request line on stdin: `turns` (the
evidence history, without the task message), `focus` (the original task), `target` (the
summary budget in tokens), `limit` (the word-limit text to append, `{task}` standing for
Hermes' task heading; empty for none) and `date` (the pinned date). A benchmark subclass sets
the budget and appends the word limit; Hermes' module-global
model call is replaced by a pipe: each call writes `{"prompt": TEXT}` on stdout and reads
`{"reply": TEXT}` (or `{"error": MESSAGE}`) on stdin. The last line written is
`{"summary": BODY}` (the native prefix stripped by Hermes' own helper) or
`{"summary": null, "error": WHY}` when Hermes returned nothing (its validation rejected the
reply, or the call failed).
"""

from __future__ import annotations

import datetime
import json
import sys
from types import SimpleNamespace
from typing import Any


def send(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def relay(suffix: str) -> Any:
    """Hermes' `call_llm`, answered over the pipe; the word limit appended to its prompt."""
    def call_llm(**kwargs: Any) -> Any:
        prompt = kwargs["messages"][-1]["content"] + suffix
        send({"prompt": prompt})
        answer = json.loads(sys.stdin.readline())
        if "error" in answer:
            raise RuntimeError(answer["error"])
        message = SimpleNamespace(content=answer["reply"])
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])
    return call_llm


def summarize(request: dict[str, Any]) -> dict[str, Any]:
    """One summary by a fresh benchmark compressor (no cooldown, no previous summary)."""
    import agent.context_compressor as compressor
    import hermes_time

    day = datetime.datetime.fromisoformat(request["date"])
    hermes_time.now = lambda *args, **kwargs: day

    class Benchmark(compressor.ContextCompressor):
        """The study's small budget: the summary budget is the task's target."""

        def _compute_summary_budget(self, turns_to_summarize: list[dict[str, Any]]) -> int:
            return int(request["target"])

    compressor.call_llm = relay(request["limit"].replace("{task}",
                                                         compressor.HISTORICAL_TASK_HEADING))
    engine = Benchmark(model="replay", quiet_mode=True, tail_mode="legacy",
                       config_context_length=131072)
    summary = engine._generate_summary(request["turns"], focus_topic=request["focus"])
    if summary is None:
        return {"summary": None, "error": engine._last_summary_error or "no summary"}
    return {"summary": engine._strip_summary_prefix(summary)}


def main() -> int:
    request = json.loads(sys.stdin.readline())
    send(summarize(request))
    return 0


if __name__ == "__main__":
    sys.exit(main())
