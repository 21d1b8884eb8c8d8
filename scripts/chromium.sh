#!/usr/bin/env bash
# Make a headless Chromium available for the web view's browser test. Idempotent.
#
#   bash scripts/chromium.sh
#
# If `chromium` (or REPLAY_CHROMIUM) already prints its version, does nothing. Otherwise installs
# Debian's `chromium` package with apt-get, as root. Where neither can be had it says so and exits
# 0: the browser test then skips, saying why.
set -euo pipefail

answers() { "$1" --version >/dev/null 2>&1; }

browser=${REPLAY_CHROMIUM:-chromium}
if command -v "$browser" >/dev/null && answers "$browser"; then
    echo "chromium: already installed ($("$browser" --version 2>/dev/null))"
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "chromium.sh: no chromium, and no apt-get as root to install it; the browser test" \
         "will skip" >&2
    exit 0
fi
echo "chromium: installing Debian's chromium with apt-get"
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null; }; then
    echo "chromium.sh: apt-get could not install chromium; the browser test will skip" >&2
    exit 0
fi
echo "chromium: installed ($(chromium --version 2>/dev/null))"
