"""Draw the values of a collected corpus to label by hand, or score the labels given.

    python scripts/draw_corpus_labels.py CORPUS --draw [--seed 36] > to-label.tsv
    python scripts/draw_corpus_labels.py CORPUS [LABELS]

The draw is seeded, not chosen: the complete sessions with at least one compaction, in the order
of their files, shuffled with the seed (36 by default: the shipped labels' draw); the first
`SESSIONS` of them; from each, `PER_SESSION` values drawn at random from the recurring-detail
references of all its boundaries (or all of them when fewer). Each row names the session by
repository, branch commit and shard path (never its text) with the value and the text around
its first sight, to label by reading: `detail` (a detail of the work a reader of the summary
could need) or `noise`.

Given a labels file (default the shipped one, replay/corpus/labels.tsv: `repository commit path
position kind value label reason`), prints the precision per detail type with its 95% Wilson
interval, and which types fall under 0.95 (not scored by `replay retention --corpus`).
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from pathlib import Path

from replay.corpus.manifest import CorpusEntry, read_manifest
from replay.corpus.precision import LABELS, THRESHOLD, measured, rule_kinds
from replay.measures.chains import score_session
from replay.measures.details import KINDS, find_details, serialize
from replay.measures.retention import Limits
from replay.measures.session_files import READERS, detect_format, read_records
from replay.measures.statistics import wilson

SEED = 36  # the draw of the shipped labels (35: the first draw, and the recall windows)
WINDOW_SEED = 35
SESSIONS = 40
PER_SESSION = 10
WINDOWS = 20
WINDOW = 600


def draw(folder: Path, seed: int) -> None:
    """Print the values drawn with `seed` with their context, tab-separated."""
    entries = sorted((e for e in read_manifest(folder) if e.complete and e.boundaries),
                     key=lambda e: e.file)
    random.Random(seed).shuffle(entries)
    writer = csv.writer(sys.stdout, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
    writer.writerow(["repository", "commit", "path", "position", "kind", "value", "context"])
    for entry in entries[:SESSIONS]:
        path = folder / entry.file
        records = read_records(path)
        session = READERS[detect_format(records, path)](records, str(path))
        text = serialize(session.messages)
        scored = score_session(session, Limits())
        values = [(c.position, kind, value) for c in scored.compactions
                  for kind in KINDS for value in c.reference.get(kind, [])]
        picked = random.Random(f"{seed}:{entry.file}").sample(values,
                                                               min(PER_SESSION, len(values)))
        for position, kind, value in sorted(picked):
            at = text.find(value)
            context = " ".join(text[max(at - 120, 0):at + len(value) + 120].split())
            writer.writerow([entry.repository, entry.commit, entry.path, position, kind, value,
                             context.replace("\t", " ")])


def windows(folder: Path) -> None:
    """Print `WINDOWS` windows of `WINDOW` serialized characters, drawn at random (seeded) from
    the drawn sessions' text before their last boundary, for listing every detail by hand."""
    for entry, offset, text in _windows(folder):
        print(f"## {entry.repository}\t{entry.commit}\t{entry.path}\t{offset}")
        print(" ".join(text.split()))


def _windows(folder: Path) -> list[tuple[CorpusEntry, int, str]]:
    entries = sorted((e for e in read_manifest(folder) if e.complete and e.boundaries),
                     key=lambda e: e.file)
    random.Random(WINDOW_SEED).shuffle(entries)
    found = []
    for entry in entries[:WINDOWS]:
        path = folder / entry.file
        records = read_records(path)
        session = READERS[detect_format(records, path)](records, str(path))
        before = session.messages[:session.compactions[-1].index]
        text = serialize(before)
        offset = random.Random(f"{WINDOW_SEED}:window:{entry.file}").randrange(
            max(len(text) - WINDOW, 1))
        found.append((entry, offset, text[offset:offset + WINDOW]))
    return found


def recall(folder: Path, listed: Path) -> None:
    """Print, per kind, how many of the details listed by hand in each window the extractor
    finds in that window."""
    by_window = {(e.repository, e.path): (offset, text) for e, offset, text in _windows(folder)}
    totals: dict[str, list[int]] = {}
    for row in csv.DictReader(listed.open(encoding="utf-8"), delimiter="\t",
                              quoting=csv.QUOTE_NONE):
        offset, text = by_window[(row["repository"], row["path"])]
        found = find_details(text).values
        hit = any(row["value"] == value for values in found.values() for value in values)
        counts = totals.setdefault(row["kind"], [0, 0])
        counts[0] += 1
        counts[1] += hit
    print("| detail type | listed by hand | found by the extractor | recall (95% Wilson) |")
    print("|---|---|---|---|")
    for kind, (listed_n, hits) in sorted(totals.items()):
        interval = wilson(hits, listed_n)
        shown = f"{hits / listed_n:.3f}"
        if interval is not None:
            shown += f" ({interval.low:.3f}-{interval.high:.3f})"
        print(f"| {kind} | {listed_n} | {hits} | {shown} |")


def precision(labels: Path) -> None:
    """Print the precision per kind with its Wilson interval, and whether the 0.95 rule of
    `replay retention --corpus` scores it."""
    rows = list(csv.DictReader(labels.open(encoding="utf-8"), delimiter="\t",
                               quoting=csv.QUOTE_NONE))
    sessions = {(row["repository"], row["path"]) for row in rows}
    print(f"{len(rows)} labelled values from {len(sessions)} sessions")
    print("| detail type | labelled | details | precision (95% Wilson) | scored |")
    print("|---|---|---|---|---|")
    found = measured(labels)
    scored = rule_kinds(found)
    for kind, counts in found.items():
        shown = f"{counts.precision:.3f}"
        if counts.interval is not None:
            shown += f" ({counts.interval.low:.3f}-{counts.interval.high:.3f})"
        verdict = "yes" if kind in scored else f"no (under {THRESHOLD})"
        print(f"| {kind} | {counts.labelled} | {counts.details} | {shown} | {verdict} |")


def main() -> int:
    """Draw, or score the labels."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("labels", nargs="?", type=Path, default=LABELS)
    parser.add_argument("--draw", action="store_true")
    parser.add_argument("--seed", type=int, default=SEED, help="the draw's seed")
    parser.add_argument("--windows", action="store_true")
    parser.add_argument("--recall", type=Path, help="details listed by hand in the windows")
    options = parser.parse_args()
    if options.draw:
        draw(options.corpus, options.seed)
    elif options.windows:
        windows(options.corpus)
    elif options.recall:
        recall(options.corpus, options.recall)
    else:
        precision(options.labels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
