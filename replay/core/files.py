"""Files written whole or not at all: the one atomic write of every artifact, export and cache
file replay keeps."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_atomic(path: Path, data: bytes | str) -> Path:
    """Write `data` (text as UTF-8) to `path` and return `path`, making missing folders.

    The bytes go to a scratch file beside it, named `.NAME.TOKEN.partial` (its own for every
    writer, so two writers of one path never mix), which is then renamed over `path`: a reader
    sees the previous file or the whole new one, and a process killed at any moment leaves at
    most a `.partial` file, which nothing reads. The file's mode is the umask's, as `open` gives.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
    try:
        with open(scratch, "xb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(scratch, path)
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise
    return path
