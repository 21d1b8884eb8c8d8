"""The Environment and Backend protocols every backend implements, and what they return."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from replay.core.paths import TESTBED, VENV

if TYPE_CHECKING:
    from replay.environments.recipes import Recipe
    from replay.instances.records import Instance
    from replay.records.snapshot import Snapshot

DEFAULT_OUTPUT_LIMIT = 100_000
# How every backend reads and writes a file, inside the environment ($1 is the absolute path): a
# link resolves there. Writing a folder exits 21.
READ_SCRIPT = '[ -f "$1" ] && exec cat -- "$1"'
WRITE_SCRIPT = '[ -d "$1" ] && exit 21; mkdir -p -- "$(dirname -- "$1")" && exec cat > "$1"'


@dataclass(frozen=True)
class ExecResult:
    """What one command did. A failed command is data, not an exception."""

    command: str
    exit_code: int
    output: str
    duration: float
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Environment(Protocol):
    """An instance's repository at `workdir` (always /testbed) and the interpreter to run it.

    `exec` runs a bash command in `workdir` with no network unless `network` is set (only the
    environment's own install steps set it). Output is stdout and stderr merged, capped to
    `output_limit` characters keeping head and tail. On timeout the whole process group is
    killed, and nothing a command started outlives it; each command has an empty /tmp of its
    own (the snapshots' scratch folder relies on it). `input`, when given, is the command's
    standard input (else it reads an empty one): the engine hands a command data (a diff, a
    patch) in the same contained command that uses it, with no file between. Raises
    `EnvironmentFault` when the environment itself is broken. `read_file` and `write_file` act
    inside the environment: a link the agent made is resolved there, never on the engine's
    machine; a file read again before the next command gives the bytes of the first read
    (`ReadCache`: nothing can have changed them).
    """

    workdir: str

    def exec(self, command: str, timeout: float = 120.0, network: bool = False,
             env: dict[str, str] | None = None, output_limit: int = DEFAULT_OUTPUT_LIMIT,
             input: bytes | None = None) -> ExecResult: ...

    def read_file(self, path: str) -> bytes: ...

    def write_file(self, path: str, data: bytes) -> None: ...

    def reset(self) -> None:
        """Back to the validated state, all of it: the tree with `.git/` and ignored files, the
        venv and every other place a command may write (an empty cell layer on `local`, a new
        container on `docker`). No process of an earlier command survives it."""
        ...

    def snapshot(self) -> Snapshot: ...

    def restore(self, snapshot: Snapshot) -> None:
        """`reset`, then the snapshot's diff applied and its fingerprint checked."""
        ...

    def close(self) -> None: ...


class Backend(Protocol):
    """Builds environments: `start` gives an instance's environment, warm when it can be.

    `slot` k > 0 is a separate copy, so that k workers can run cells of one instance at once;
    no two processes ever get one tree (a local slot leased elsewhere gives the next free one).
    `close` releases what the backend holds (local slot leases, the docker backend's containers).
    `mirrors` is the folder of bare repository mirrors it clones from (None: GitHub), where
    recipes read a spec's requirements files too.
    """

    name: str
    mirrors: Path | None

    def start(self, instance: Instance, recipe: Recipe, rebuild: bool = False,
              slot: int = 0) -> Environment: ...

    def close(self) -> None: ...


class ReadCache:
    """The files an environment read since it last ran a command, to give a second read of one
    without a command. Sound because nothing changes the tree between two commands: nothing a
    command started outlives it, and the engine writes only through commands (`exec`,
    `write_file`, `reset` each forget it). At most `limit` bytes are kept."""

    def __init__(self, limit: int = 16 << 20) -> None:
        self.limit = limit
        self.files: dict[str, bytes] = {}

    def get(self, path: str) -> bytes | None:
        return self.files.get(path)

    def keep(self, path: str, data: bytes) -> bytes:
        """Keep `data` as `path`'s bytes (unless they would exceed the limit); returns it."""
        if sum(map(len, self.files.values())) + len(data) <= self.limit:
            self.files[path] = data
        return data

    def clear(self) -> None:
        self.files.clear()


def inside(path: str) -> str | None:
    """The absolute form of a path in the tree or the venv, or None for any other path."""
    full = posixpath.normpath(posixpath.join(TESTBED, path))
    for root in (TESTBED, VENV):
        if full == root or full.startswith(root + "/"):
            return full
    return None


def check_written(path: str, code: int | None, errors: bytes) -> None:
    """Raise what a failed WRITE_SCRIPT of `path` means: IsADirectoryError, PermissionError."""
    if code == 21:
        raise IsADirectoryError(path)
    if code != 0:
        raise PermissionError(f"cannot write {path}: "
                              f"{errors.decode('utf-8', 'replace').strip()[-300:]}")


def cap_output(text: str, limit: int) -> tuple[str, bool]:
    """Keep the head and tail of `text` within `limit` characters; say whether it was cut."""
    if len(text) <= limit:
        return text, False
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters cut ...]\n{text[-half:]}", True
