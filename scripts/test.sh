#!/usr/bin/env bash
# Run replay's checks as a new user would: install (if needed), start a Docker Engine and build
# the base image for the docker backend's tests, lint, then the test suite.
# REPLAY_SKIP_DOCKER=1 skips the engine set-up (the docker tests then skip, saying why).
# The tests run on REPLAY_TEST_WORKERS processes (default 3, pytest-xdist; 0 runs them in this
# one): tests/conftest.py schedules those that share a machine-wide thing on one worker.
# Chromium is installed for the web view's browser test (it skips, saying why, where it cannot).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/chromium.sh
if [ "${REPLAY_SKIP_DOCKER:-}" != "1" ]; then
    bash scripts/docker-engine.sh
    bash scripts/build-base-image.sh
fi
.venv/bin/ruff check replay tests scripts
.venv/bin/python -m pytest -n "${REPLAY_TEST_WORKERS:-3}" "$@"
