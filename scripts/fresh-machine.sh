#!/usr/bin/env bash
# Check the README's two commands on a bare Debian 12, as a new user's machine sees them.
#
#   bash scripts/fresh-machine.sh [--first] [REF]    (default REF: HEAD of this clone)
#
# Builds (once) a Debian bookworm image that has only python3, venv, pip, git, CA certificates and
# build-essential: no pyenv, no uv, no Docker, no replay cache. Clones REF of this repository into
# a new folder with ../shared beside it, and runs in a container of that image, with no standard
# input and CI=true:
#   1. the first README command: it must run the main job against the embedded model, exit 0
#      with the grid; then a named model without its key must be one line, exit 2;
#   2. the second README command (bash scripts/test.sh): it installs and starts its own Docker
#      Engine inside the container (Docker in Docker), builds the base image, and must pass.
# With --first, only step 1 runs (a few minutes instead of the test suite's half hour).
# It prints each command's time and pytest's closing line, and exits non-zero when either fails.
# The container stands in for a machine: no masked /proc (systempaths=unconfined), as on a real
# one, so that bubblewrap can mount a fresh /proc for each command's PID namespace.
# Only this machine's network settings go in (its CA bundle and pip/uv index and proxy variables):
# what a user's machine would have. Needs root, a Docker Engine (scripts/docker-engine.sh) and a
# reachable Debian mirror and PyPI. Takes about 35 minutes on two cores (--first: about 5).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
FIRST_ONLY=0
if [ "${1:-}" = "--first" ]; then FIRST_ONLY=1; shift; fi
REF=${1:-HEAD}
IMAGE=replay-fresh:bookworm
INCLUDE=python3,python3-venv,python3-pip,git,ca-certificates,build-essential
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${REPLAY_BASE_CACHE:-/var/cache/replay-base}
RECIPE=$(printf '%s\n' bookworm "$INCLUDE" minbase fresh-v1 | sha256sum | cut -c1-16)

bash scripts/docker-engine.sh >/dev/null
if [ "$(docker image inspect --format '{{index .Config.Labels "replay.recipe"}}' "$IMAGE" \
        2>/dev/null || true)" != "$RECIPE" ]; then
    TARBALL="$CACHE/fresh-bookworm-$RECIPE.tar"
    if [ ! -s "$TARBALL" ]; then
        command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
        ROOTFS=$(mktemp -d /var/tmp/replay-fresh-rootfs.XXXXXX)
        echo "fresh machine: debootstrap bookworm with $INCLUDE (1-2 min)"
        debootstrap --variant=minbase --include="$INCLUDE" bookworm "$ROOTFS" "$MIRROR" \
            >"$ROOTFS.log" 2>&1 || { tail -n 20 "$ROOTFS.log" >&2; exit 1; }
        rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb
        mkdir -p "$CACHE"
        tar -C "$ROOTFS" --numeric-owner -cf "$TARBALL.partial" .
        mv "$TARBALL.partial" "$TARBALL"
        rm -rf "$ROOTFS" "$ROOTFS.log"
    fi
    docker import --change "LABEL replay.recipe=$RECIPE" \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' "$TARBALL" "$IMAGE" >/dev/null
fi

WORK=$(mktemp -d /var/tmp/replay-fresh.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
git clone -q "$ROOT" "$WORK/main"
git -C "$WORK/main" checkout -q --detach "$(git rev-parse "$REF")"
cp -a "$ROOT/../shared" "$WORK/shared"
chmod -R a-w "$WORK/shared"
echo "fresh machine: $(git -C "$WORK/main" log -1 --format='%h %s')"

# This machine's network settings, as a user's machine would have its own (and no key at all).
network=()
for name in SSL_CERT_FILE REQUESTS_CA_BUNDLE PIP_CERT PIP_INDEX_URL PIP_EXTRA_INDEX_URL \
        PIP_DEFAULT_TIMEOUT UV_INDEX_URL UV_DEFAULT_INDEX HTTP_PROXY HTTPS_PROXY NO_PROXY \
        http_proxy https_proxy no_proxy; do
    [ -n "${!name:-}" ] && network+=(-e "$name=${!name}")
done
[ -f /etc/ssl/certs/ca-certificates.crt ] && \
    network+=(-v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro)

cat >"$WORK/check.sh" <<'EOF'
set -uo pipefail
cd /src/main
start=$(date +%s)
bash scripts/setup.sh && { set_up=$(date +%s); .venv/bin/replay backbone >/src/first.out 2>/src/first.err; }
first=$?
cat /src/first.out /src/first.err
end=$(date +%s)
echo "first command: exit $first in $(( end - start )) s (setup $(( ${set_up:-$end} - start )) s, replay backbone $(( end - ${set_up:-$end} )) s)"
[ "$first" -eq 0 ] && grep -q 'outcome' /src/first.out \
    || { echo "first command: expected exit 0 and the outcome grid (the embedded model)"; exit 1; }
.venv/bin/replay backbone --model kimi-k2 --agent-model kimi-k2 >/dev/null 2>/src/key.err
key=$?
[ "$key" -eq 2 ] && [ "$(wc -l </src/key.err)" -eq 1 ] && grep -q MOONSHOT_API_KEY /src/key.err \
    || { echo "a named model without its key: expected exit 2 and one line naming MOONSHOT_API_KEY"; exit 1; }
echo "a named model without its key: exit 2, one line: $(cat /src/key.err)"
[ "${FIRST_ONLY:-0}" -eq 1 ] && exit 0
start=$(date +%s)
bash scripts/test.sh -q >/src/second.log 2>&1
second=$?
tail -n 40 /src/second.log
echo "second command: exit $second in $(( $(date +%s) - start )) s"
exit "$second"
EOF

echo "fresh machine: running the README's two commands in a bare Debian container"
docker run --rm -i --name "replay-fresh-$$" \
    --cap-add ALL --cap-drop SYS_RESOURCE --security-opt seccomp=unconfined \
    --security-opt systempaths=unconfined \
    --security-opt apparmor=unconfined --cgroupns host -v /sys/fs/cgroup:/sys/fs/cgroup \
    --tmpfs /var/lib/docker:exec --tmpfs /var/cache/replay-base \
    -v "$WORK:/src" -e CI=true -e FIRST_ONLY="$FIRST_ONLY" "${network[@]}" \
    "$IMAGE" bash /src/check.sh </dev/null
