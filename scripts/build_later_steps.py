"""Ship the later steps of each compact-bench trajectory: what the real agent did next.

    .venv/bin/python scripts/build_later_steps.py --source SOURCE_MIRROR

For every instance of instances/compact-bench, the trajectory its history was imported from
(the provenance in its history.json: gruckion/mini-swe-agent at a fixed commit, with the file's
sha256) is read from SOURCE_MIRROR, a bare clone of that repository (the `fetch` tool brings
one), converted by replay's importer, and the messages after the history's boundary are
serialized as retention reads them (`replay.measures.details.serialize`), cut to the reference's
400,000 characters. The result, `later.json` beside history.json, holds the payloads with the
same provenance, how many messages they came from and their size; `replay retention RUN` scores
compact-bench summaries against it (reference source `suite`) when the store does not hold the
trajectory itself. A file whose sha256 differs from the provenance's stops the build.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import tempfile
from pathlib import Path

from replay.api.blocks import (
    HISTORY_FILE,
    LATER_FILE,
    MAX_CHARS,
    load_history_file,
    read_trajectory,
    serialize,
)

SUITE = Path(__file__).resolve().parent.parent / "instances" / "compact-bench"


def later_steps(folder: Path, mirror: Path, scratch: Path) -> dict[str, object]:
    """The later-steps record of one instance folder (see the module docstring)."""
    history = load_history_file(folder / HISTORY_FILE)
    provenance = json.loads((folder / HISTORY_FILE).read_text(encoding="utf-8"))["provenance"]
    data = subprocess.run(["git", "-C", str(mirror), "show",
                           f"{provenance['commit']}:{provenance['path']}"],
                          check=True, capture_output=True).stdout
    if hashlib.sha256(data).hexdigest() != provenance["sha256"]:
        raise SystemExit(f"{folder.name}: the trajectory's sha256 differs from its provenance")
    local = scratch / f"{folder.name}.traj.json"
    local.write_bytes(data)
    messages = read_trajectory(local).messages
    later = messages[len(history.messages):]
    text = serialize(later)[:MAX_CHARS]
    return {"instance_id": history.instance_id, "provenance": provenance,
            "history_messages": len(history.messages), "later_messages": len(later),
            "chars": len(text), "payloads": text}


def main() -> int:
    """Write later.json into every instance folder of the suite."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        for folder in sorted(path for path in SUITE.iterdir() if (path / HISTORY_FILE).is_file()):
            record = later_steps(folder, args.source, Path(scratch))
            (folder / LATER_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
            print(f"{folder.name}: {record['later_messages']} later messages, "
                  f"{record['chars']:,} characters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
