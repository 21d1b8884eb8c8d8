#!/usr/bin/env bash
# Run replay's checks as a new user would: install (if needed), lint, then the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
.venv/bin/ruff check replay tests scripts
.venv/bin/python -m pytest "$@"
