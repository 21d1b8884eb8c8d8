"""Time retention scoring of synthetic sessions against a naive regex-per-type scan.

    python scripts/bench_retention.py [--sessions 1000] [--chars 400000] [--naive 30]

Each synthetic session is a coding-agent session of about --chars serialized characters (file
listings, test runs with tracebacks, greps, edits, logs with hosts and hashes, prose) with two
compactions and recorded requests; its vocabulary is drawn per session, so no two sessions are
alike. Scoring a session is what `replay retention --sessions` does for it: the completeness
filter, and for each compaction the recurring-detail and production-chain references (noise
rules applied), whole-token matching with the forms of a path (the session's working directory
is /repo) and the disorder check. Prints the median, 90th percentile and worst time per
session, and the median of a naive scorer on the first --naive sessions (one regular expression
per type over the whole text, each value looked up in the whole later text) with the ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time

from replay.api.blocks import (
    ERROR_TYPE,
    FUTURE_PAYLOADS,
    PATH_PATTERN,
    TEST_ID_PATTERN,
    URL_PATTERN,
    Limits,
    Session,
    score_session,
    serialize,
)

WORDS = ("parse", "load", "config", "cache", "token", "render", "index", "query", "client",
         "buffer", "schema", "route", "event", "queue", "stream", "batch", "field", "value",
         "user", "order", "item", "price", "stock", "report", "session", "handler", "writer",
         "reader", "format", "source", "target", "entry", "record", "lookup", "resolve", "match",
         "build", "merge", "split", "check", "update", "delete", "create", "fetch", "store",
         "limit", "offset", "page", "header", "body", "status", "retry", "timeout", "worker")
NAIVE_PATTERNS = {
    "url": URL_PATTERN.pattern, "test_id": TEST_ID_PATTERN.pattern, "path": PATH_PATTERN.pattern,
    "error_type": rf"(?<![\w.]){ERROR_TYPE}\b", "error_message": rf"{ERROR_TYPE}: [^\n]+",
    "host": r"(?<![\w.-])(?:localhost|(?:\d{1,3}\.){3}\d{1,3})(?::\d{1,5})?",
    "version": r"(?<![\w.])v?\d+(?:\.\d+){2,}", "hash": r"(?<![\w-])[0-9a-f]{7,40}(?![\w-])",
    "number": r"(?<![\w.])\d+(?:\.\d+)?(?:%|[ \t]?(?:ms|s|MB|passed|failed)\b)",
    "command": r"(?m)^\$ [^\n]+",
    "identifier": r"(?<![\w.])(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z]\w*_\w*|[a-z]\w*[A-Z]\w*"
                  r"|[A-Za-z]\w*(?=\())",
}


class Vocabulary:
    """The names, paths and values one session talks about, drawn from its own seed."""

    def __init__(self, rng: random.Random, index: int) -> None:
        def words(count: int) -> list[str]:
            """`count` words drawn from WORDS."""
            return [rng.choice(WORDS) for _ in range(count)]

        self.rng = rng
        self.names = list(dict.fromkeys("_".join(words(rng.choice((2, 3)))) for _ in range(150)))
        self.classes = list(dict.fromkeys("".join(w.title() for w in words(2)) for _ in range(25)))
        package = rng.choice(WORDS)
        self.paths = list(dict.fromkeys(f"src/{package}/{'_'.join(words(2))}.py"
                                        for _ in range(30)))
        self.hosts = [f"10.{rng.randrange(256)}.{rng.randrange(256)}.{n}:{8000 + n}"
                      for n in range(5)]
        self.hashes = [f"{rng.getrandbits(40):010x}a" for _ in range(10)]
        self.versions = [f"{rng.randrange(4)}.{rng.randrange(30)}.{rng.randrange(12)}"
                         for _ in range(12)]

        self.files: dict[str, str] = {}

    def pick(self, values: list[str]) -> str:
        """One of `values`, drawn from the session's seed."""
        return self.rng.choice(values)


def listing(v: Vocabulary) -> str:
    """A numbered listing of one of the session's files (a file reads the same every time)."""
    path = v.pick(v.paths)
    if path not in v.files:
        lines = [f"class {v.pick(v.classes)}:"]
        for _ in range(60):
            lines.append(f"    def {v.pick(v.names)}(self, {v.pick(v.names)}):")
            lines.append(f"        return self.{v.pick(v.names)}({v.pick(v.names)}) + 1")
        v.files[path] = "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(lines, 1))
    return f"{path}\n{v.files[path]}"


def test_run(v: Vocabulary) -> str:
    """A failing pytest run with its traceback."""
    path = v.pick(v.paths).replace("src/", "tests/test_")
    failing = v.pick(v.names)
    return (f"$ python -m pytest {path} -q\n" + "." * 60 + " [ 42%]\n"
            f"FAILED {path}::test_{failing} - KeyError: '{v.pick(v.names)}'\n"
            "Traceback (most recent call last):\n"
            f'  File "/repo/{v.pick(v.paths)}", line {v.rng.randrange(400)}, in {failing}\n'
            f"{v.pick(v.classes)}Error: cannot {v.pick(WORDS)} {v.pick(v.names)}\n"
            f"1 failed, {v.rng.randrange(100)} passed in {v.rng.random() * 9:.2f}s\n")


def log_lines(v: Vocabulary) -> str:
    """Service log lines: hashes, hosts and ports, timings, versions, URLs."""
    return "\n".join(
        f"INFO [{v.pick(v.hashes)}] {v.pick(v.names)} connected to {v.pick(v.hosts)} in "
        f"{v.rng.randrange(900)} ms (client {v.pick(v.versions)}), see "
        f"https://ci.example.com/{v.pick(WORDS)}/{v.rng.randrange(90)}" for _ in range(25))


def step(v: Vocabulary, n: int) -> list[dict]:
    """One tool round: the call, and its output."""
    kind = n % 4
    if kind == 3:
        path = v.pick(v.paths)
        arguments = {"path": f"/repo/{path}", "content": listing(v)}
        call = {"id": f"c{n}", "type": "function",
                "function": {"name": "write_file", "arguments": json.dumps(arguments)}}
        return [{"role": "assistant", "content": f"Editing {path}.", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{n}", "content": f"wrote /repo/{path}"}]
    output = (listing, test_run, log_lines)[kind](v)
    command = {0: "cat -n", 1: "python -m pytest -q", 2: "tail -n 25 logs/app.log"}[kind]
    call = {"id": f"c{n}", "type": "function", "function": {
        "name": "bash", "arguments": json.dumps({"command": f"{command} {v.pick(v.paths)}"})}}
    return [{"role": "assistant", "content": f"Now {v.pick(v.names)} in {v.pick(v.paths)}.",
             "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": output}]


def synthetic_session(index: int, chars: int) -> Session:
    """A session of about `chars` serialized characters with two compactions."""
    v = Vocabulary(random.Random(index), index)
    session = Session(f"synthetic-{index}", "messages",
                      [{"role": "user", "content": f"Fix {v.pick(v.names)} in {v.pick(v.paths)}"}],
                      cwd="/repo")
    size, n, cached = 0, 0, 0
    while size < chars:
        for message in step(v, n):
            if message["role"] == "assistant":
                session.add_request(size // 4 + 1000, cached)
                cached = size // 4 + 900
            session.messages.append(message)
            size += len(serialize([message])) + 2
        n += 1
        if len(session.compactions) < 2 and size > chars * (len(session.compactions) + 1) / 3:
            summary = (f"Summary: working on {v.pick(v.paths)}; {v.pick(v.names)} fails with "
                       f"KeyError. Next: fix {v.pick(v.names)} and rerun python -m pytest -q.")
            session.add_compaction(summary, "auto")
            cached = 0
    return session


def naive_score(session: Session, limits: Limits) -> int:
    """Recurring and future references the slow way: every regex over every text, every value
    looked up in the whole later text. Returns how many values were kept (to use the result)."""
    kept = 0
    previous = 0
    for position, compaction in enumerate(session.compactions):
        later_end = (session.compactions[position + 1].index
                     if position + 1 < len(session.compactions) else len(session.messages))
        history = serialize(session.messages[previous:compaction.index])[-limits.max_chars:]
        later = serialize(session.messages[compaction.index:later_end])[:limits.max_chars]
        future = serialize(session.messages[compaction.index:][:FUTURE_PAYLOADS])
        for pattern in NAIVE_PATTERNS.values():
            values = list(dict.fromkeys(re.findall(pattern, history)))
            recurring = [value for value in values if value in later][:limits.per_kind]
            upcoming = list(dict.fromkeys(re.findall(pattern, future)))[:limits.per_kind]
            kept += sum(value in compaction.summary for value in recurring + upcoming)
        previous = compaction.index
    return kept


def timed(function: object, *arguments: object) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    function(*arguments)  # type: ignore[operator]
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> int:
    """Score the sessions, print the figures; 1 when the median misses the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--chars", type=int, default=400_000)
    parser.add_argument("--naive", type=int, default=30)
    args = parser.parse_args()
    limits = Limits()
    ours, cpu, naive, sizes = [], [], [], []
    for index in range(args.sessions):
        session = synthetic_session(index, args.chars)
        sizes.append(len(serialize(session.messages)))
        wall, used = timed(score_session, session, limits)
        ours.append(1000 * wall)
        cpu.append(1000 * used)
        if index < args.naive:
            naive.append(1000 * timed(naive_score, session, limits)[0])
    ours.sort()
    median, naive_median = statistics.median(ours), statistics.median(naive)
    print(f"{args.sessions} synthetic sessions of {statistics.median(sizes):,.0f} serialized "
          f"characters (median), 2 compactions each")
    print(f"retention scoring: median {median:.1f} ms per session (CPU "
          f"{statistics.median(cpu):.1f} ms), p90 {ours[int(0.9 * len(ours))]:.1f} ms, worst "
          f"{ours[-1]:.1f} ms")
    print(f"naive regex-per-type scan: median {naive_median:.1f} ms per session "
          f"({len(naive)} sessions); ratio {naive_median / median:.1f}x")
    print("target, median under 50 ms per session (wall clock):",
          "met" if median < 50 else "NOT met")
    return 0 if median < 50 else 1


if __name__ == "__main__":
    raise SystemExit(main())
