"""Where replay keeps its files. Environment variables are read here and nowhere else."""

from __future__ import annotations

import os
from pathlib import Path

from replay.core.errors import InputError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TESTBED = "/testbed"  # where an instance's repository is, in every backend
VENV = "/opt/replay-venv"  # where its interpreter and packages are, in every backend
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # the system's PATH


def home() -> Path:
    """Replay's cache directory: environments, working trees, synced prompts (REPLAY_HOME)."""
    base = os.environ.get("REPLAY_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "replay"
    )
    return Path(base)


def checked_home() -> Path:
    """`home()` when it is a folder, or can be made as one; bad input otherwise (a file, a
    FIFO, or under a file), before any command uses it."""
    from replay.core.input_paths import output_problem
    from replay.core.names import shown

    found = home()
    problem = output_problem(found, folder=True)
    if problem is not None:
        source = "REPLAY_HOME" if os.environ.get("REPLAY_HOME") else "replay's cache folder"
        raise InputError(f"{source} {shown(found)} {problem}: give a folder")
    return found


def within(root: Path, *parts: str) -> Path:
    """`root` joined with `parts`, which must stay under `root` (no `..` out of it, no absolute
    part): a path computed from an identifier never leaves its folder. Bad input otherwise."""
    joined = Path(os.path.normpath(root.joinpath(*parts)))
    base = Path(os.path.normpath(root))
    if joined != base and base not in joined.parents:
        raise InputError(f"{'/'.join(parts)!r} leads out of {root}: refused")
    return root.joinpath(*parts)


def default_store() -> Path:
    """The default SQLite store, ./runs/replay.db (REPLAY_STORE overrides)."""
    return Path(os.environ.get("REPLAY_STORE") or "runs/replay.db")


def instances_dir() -> Path:
    """The bundled suites."""
    return PROJECT_ROOT / "instances"


def environments_dir() -> Path:
    """The environment recipes: the bundled ones unless REPLAY_ENVIRONMENTS names a folder (bad
    input when it names anything else)."""
    named = os.environ.get("REPLAY_ENVIRONMENTS")
    if named and not Path(named).is_dir():
        from replay.core.names import shown

        raise InputError(f"REPLAY_ENVIRONMENTS {shown(named)} is not a folder: give a folder "
                         "of environment recipes")
    return Path(named or PROJECT_ROOT / "environments")


def prompts_dir() -> Path:
    """The bundled prompts of the continuation agent and the prompt sources."""
    return PROJECT_ROOT / "prompts"


def repo_mirrors_from_env() -> Path | None:
    """Directory of bare repository mirrors named by REPLAY_REPO_MIRRORS, if any."""
    value = os.environ.get("REPLAY_REPO_MIRRORS")
    return Path(value) if value else None


# Variables that install steps need to reach a package index through this machine's proxy or
# certificate authority. They are passed only to steps that have network access.
NETWORK_VARIABLES = (
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_DEFAULT_TIMEOUT", "UV_INDEX_URL",
    "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_NATIVE_TLS", "UV_SYSTEM_CERTS",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
)


def network_variables() -> dict[str, str]:
    """This machine's proxy, index and certificate settings, for install steps only."""
    return {name: os.environ[name] for name in NETWORK_VARIABLES if name in os.environ}
