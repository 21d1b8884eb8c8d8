"""Recompute the retention validation figures on the hand-labelled set and print them.

    python scripts/validate_retention.py [FOLDER] [--todo]

FOLDER (default tests/fixtures/validation) holds real sessions and their labels (see
`replay.measures.validation`). Prints the reference precision per detail type and the disorder
check's precision and recall as the README's table. With --todo, also prints every sampled value
or flag that has no label yet, with the text around its first sight, to label by reading.
Exit code 1 when a sampled value or flag has no label. The labels drawn at random from a
collected corpus (400 values of 40 sessions, precision and recall per type) are read by
`scripts/draw_corpus_labels.py` (see docs/retention-corpus.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from replay.api.blocks import load_sessions, markdown_table, serialize
from replay.api.blocks import validate_retention as validate

DEFAULT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "validation"


def context_of(folder: Path, session: str, value: str, width: int = 90) -> str:
    """The text around the first sight of `value` in the named session, on one line."""
    for found in load_sessions([folder / session]):
        text = serialize(found.messages)
        at = text.find(value)
        if at >= 0:
            return " ".join(text[max(at - width, 0):at + len(value) + width].split())
    return ""


def main() -> int:
    """Print the table; with --todo, the values still to label."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--todo", action="store_true")
    args = parser.parse_args()
    found = validate(args.folder)
    print(f"{found.sessions} sessions, {found.boundaries} boundaries")
    print(markdown_table(found))
    for sampled in found.unlabelled if args.todo else []:
        print("\t".join([sampled.session, str(sampled.position), sampled.kind, sampled.value,
                         context_of(args.folder, sampled.session, sampled.value)]))
    for session, position, name in found.unlabelled_flags if args.todo else []:
        print("\t".join([session, str(position), "disorder", name]))
    missing = len(found.unlabelled) + len(found.unlabelled_flags)
    if missing:
        print(f"{missing} sampled value(s) or flag(s) have no label yet")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
