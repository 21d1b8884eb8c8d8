#!/usr/bin/env bash
# Make a Docker Engine answer on this machine, for `--backend docker` and its tests. Idempotent.
#
#   bash scripts/docker-engine.sh
#
# If `docker version` already reaches an engine, does nothing. Otherwise installs docker.io with
# apt-get where dockerd is missing, starts dockerd in the background with the overlay2 storage
# driver (the vfs driver makes every container start take seconds), and waits until it answers.
# Needs root. The daemon's log is /var/log/replay-dockerd.log.
set -euo pipefail

LOG=/var/log/replay-dockerd.log
WAIT_SECONDS=60

answers() { docker version >/dev/null 2>&1; }

if command -v docker >/dev/null && answers; then
    echo "docker engine: already running ($(docker version --format '{{.Server.Version}}'))"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "docker-engine.sh: needs root to install and start dockerd" >&2
    exit 1
fi
if ! command -v dockerd >/dev/null; then
    echo "docker engine: installing docker.io with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq docker.io >/dev/null
fi
if ! pgrep -x dockerd >/dev/null; then
    echo "docker engine: starting dockerd (storage driver overlay2, log $LOG)"
    setsid nohup dockerd --storage-driver overlay2 >"$LOG" 2>&1 </dev/null &
fi
for _ in $(seq "$WAIT_SECONDS"); do
    if answers; then
        echo "docker engine: running ($(docker version --format '{{.Server.Version}}'))"
        exit 0
    fi
    sleep 1
done
echo "docker-engine.sh: dockerd did not answer within ${WAIT_SECONDS} s; see $LOG:" >&2
tail -n 20 "$LOG" >&2 || true
exit 1
