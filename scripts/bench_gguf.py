"""The embedded model's speed, and where the first README command spends its time.

    python scripts/bench_gguf.py [--model smollm2] [--instance replay-demo__iniconf-1]
                                 [--sweep | --store runs/replay.db]

1. Tokens per second: the instance's history with the agent's tools, prefilled cold (no prompt
   cache), then a reply of up to 64 tokens, as llama.cpp times them (prompt and generation).
2. The prefix cache on a PRE continuation: the next step's request (the history, one tool call
   and its result) sent after the history, once with llama.cpp's prompt cache and once without;
   the speed-up is the ratio of their times.
3. With `--sweep`, the first README command (`replay backbone`, in a scratch store and
   REPLAY_HOME's prompts as they are) is run and timed; with `--store`, a finished run is read.
   Either prints seconds per cell and the share of the command's time spent in model calls
   (the target is at least 80%: the rest is environments, tests and the engine).
Say how busy the machine was: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from replay import api
from replay.api.blocks import (
    TOOLS,
    ChatRequest,
    Store,
    all_cells,
    bundled_history,
    loaded,
    request_body,
    resolve,
    seconds_total,
    settled,
)


def _ask(server: object, body: dict, cache: bool) -> tuple[float, dict]:
    started = time.monotonic()
    reply = server.handle_chat_completions({**body, "cache_prompt": cache})
    if "error" in reply:
        sys.exit(f"bench: the model refused: {reply['error']}")
    return time.monotonic() - started, reply


def speeds(model: str, instance_id: str) -> None:
    """Print prompt and generation tokens per second, and the prefix cache's speed-up."""
    spec = resolve(model)
    instance = api.instances("demo", ids=[instance_id])[0]
    history = bundled_history(instance).messages
    started = time.monotonic()
    server = loaded(spec)
    print(f"load: {time.monotonic() - started:.1f} s ({spec.alias}, {spec.threads or 'all'} "
          f"thread(s), context {spec.context_window})")
    first = request_body(settled(spec, ChatRequest(messages=history, tools=TOOLS,
                                                   max_tokens=64, temperature=0), 0))
    seconds, reply = _ask(server, first, cache=False)
    timing = reply["timings"]
    print(f"prompt: {timing['prompt_n']} tokens at {timing['prompt_per_second']:.1f} tokens/s; "
          f"generation: {timing['predicted_n']} tokens at "
          f"{timing['predicted_per_second']:.1f} tokens/s ({seconds:.1f} s)")
    step = [*history, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_0", "type": "function",
         "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "call_0", "content": "README.md\nsrc\ntests"}]
    following = {**first, "messages": step, "max_tokens": 1}
    cold, _ = _ask(server, following, cache=False)
    _ask(server, first | {"max_tokens": 1}, cache=True)  # the slot holds the history again
    warm, reply = _ask(server, following, cache=True)
    print(f"prefix cache on the next PRE step: {cold:.1f} s without, {warm:.1f} s with "
          f"({reply['timings']['cache_n']} tokens reused): {cold / max(warm, 1e-3):.1f}x")


def sweep_share(store: Path) -> None:
    """Print seconds per cell and the share of the command's time in model calls."""
    with Store.open_read_only(store) as opened:
        cells = all_cells(opened)
        model = seconds_total(opened)
    seconds = [cell.seconds for cell in cells]
    total = sum(seconds)
    print(f"cells: {len(seconds)}, {total / max(1, len(seconds)):.1f} s per cell; model calls: "
          f"{model[1]}, {model[0]:.1f} s, {100 * model[0] / max(total, 1e-9):.0f}% of the cells' "
          "time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--instance", default="replay-demo__iniconf-1")
    parser.add_argument("--sweep", action="store_true", help="run the first README command")
    parser.add_argument("--store", type=Path, help="read a finished run instead")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    speeds(args.model, args.instance)
    store = args.store
    if args.sweep:
        store = Path(tempfile.mkdtemp(prefix="bench-gguf-")) / "replay.db"
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "replay", "backbone", "--store", str(store)],
                              capture_output=True, text=True)
        print(f"first command: exit {done.returncode} in {time.monotonic() - started:.0f} s")
    if store is not None:
        sweep_share(store)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
