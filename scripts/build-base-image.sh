#!/usr/bin/env bash
# Build replay's Docker base image without any registry: debootstrap + `docker import`. Idempotent.
#
#   bash scripts/build-base-image.sh [TAG]        (default TAG: replay-base:bookworm)
#
# The image is a minimal Debian bookworm with what replay's environments need at run time: bash,
# git, iproute2 (to route unroutable addresses into a black hole), coreutils `timeout`, Debian's
# python3 (3.11: what the demo suite and any 3.11 recipe use, so a machine without pyenv runs the
# docker backend), and the shared libraries a CPython built on Debian links against (other
# versions are copied in from the host's pyenv or uv by the docker backend, at the same path),
# and a C compiler (build-essential, python3-dev): repositories such as astropy build their
# extensions when an environment installs them, as they do on the local backend with the host's.
# The label replay.pythons lists its own Python versions. The image is labelled with a digest of
# this recipe: a second run finds it and returns at once; the root file system tarball is kept in
# $REPLAY_BASE_CACHE (default /var/cache/replay-base) so that a wiped engine re-imports in seconds.
# Needs root, a running engine (scripts/docker-engine.sh) and a reachable Debian mirror.
set -euo pipefail

TAG=${1:-replay-base:bookworm}
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${REPLAY_BASE_CACHE:-/var/cache/replay-base}
PACKAGES=git,ca-certificates,iproute2,procps,patch,libssl3,libffi8,libsqlite3-0,libbz2-1.0,\
liblzma5,zlib1g,libreadline8,libncursesw6,libuuid1,libexpat1,libtirpc3,libnsl2,libgdbm6,\
libgdbm-compat4,python3,python3-dev,build-essential
RECIPE=$(printf '%s\n' "$SUITE" "$PACKAGES" "minbase" "v2" | sha256sum | cut -c1-16)

if ! docker version >/dev/null 2>&1; then
    echo "build-base-image.sh: no Docker Engine answers; run: bash scripts/docker-engine.sh" >&2
    exit 1
fi
if [ "$(docker image inspect --format '{{index .Config.Labels "replay.recipe"}}' "$TAG" \
        2>/dev/null || true)" = "$RECIPE" ]; then
    echo "base image: $TAG is up to date (recipe $RECIPE)"
    exit 0
fi
TARBALL="$CACHE/$SUITE-$RECIPE.tar"
if [ ! -s "$TARBALL" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "build-base-image.sh: debootstrap needs root" >&2
        exit 1
    fi
    if ! command -v debootstrap >/dev/null; then
        echo "base image: installing debootstrap with apt-get"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    fi
    ROOTFS=$(mktemp -d /var/tmp/replay-rootfs.XXXXXX)
    trap 'rm -rf "$ROOTFS" "$ROOTFS.log"' EXIT
    echo "base image: debootstrap --variant=minbase $SUITE (30-50 s)"
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" \
        >"$ROOTFS.log" 2>&1 || { tail -n 20 "$ROOTFS.log" >&2; exit 1; }
    rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
    mkdir -p "$CACHE"
    tar -C "$ROOTFS" --numeric-owner -cf "$TARBALL.partial" .
    mv "$TARBALL.partial" "$TARBALL"
fi
PYTHONS=$(tar -tf "$TARBALL" | sed -n 's|^\./usr/bin/python\(3\.[0-9]*\)$|\1|p' | sort -u | xargs)
echo "base image: docker import $TARBALL as $TAG (Python $PYTHONS)"
docker import --change "LABEL replay.pythons=$PYTHONS" \
    --change "LABEL replay.recipe=$RECIPE" --change "LABEL replay.kind=base" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' --change 'CMD ["bash"]' \
    "$TARBALL" "$TAG" >/dev/null
echo "base image: $TAG ready (recipe $RECIPE)"
