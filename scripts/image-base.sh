#!/usr/bin/env bash
# Builds a local Debian base image with Node for the image smoke test (scripts/image-smoke.sh), on a
# machine where no container registry is reachable: debootstrap from Debian's mirror, this machine's
# node and npm copied in. Cached: the rootfs under /var/tmp and the podman image are keyed by the
# inputs (suite, mirror, packages, node version, this script), so a second run prints the tag at once.
# Prints the image name (localhost/dimsum-base:<key>) on stdout; progress goes to stderr.
set -euo pipefail

SUITE="${DIMSUM_BASE_SUITE:-bookworm}"
MIRROR="${DIMSUM_BASE_MIRROR:-http://deb.debian.org/debian}"
# libstdc++6 for node; ca-certificates for npm and the server's HTTPS calls; passwd for useradd;
# bubblewrap and tini are what the Dockerfile's runtime stage adds on node:22-slim, here already.
PACKAGES="ca-certificates,libstdc++6,passwd,bubblewrap,tini"
NODE_BIN="$(command -v node)"
NPM_DIR="$(dirname "$(readlink -f "$(command -v npm)")")/.."
NPM_DIR="$(cd "$NPM_DIR" && pwd)"

key_input="$SUITE $MIRROR $PACKAGES $("$NODE_BIN" --version) $(npm --version) $(sha256sum "$0" | cut -c1-64)"
KEY="$(printf '%s' "$key_input" | sha256sum | cut -c1-12)"
IMAGE="localhost/dimsum-base:$KEY"
CACHE="/var/tmp/dimsum-base-$KEY"

if podman image exists "$IMAGE"; then
  echo "$IMAGE"
  exit 0
fi

if [ ! -f "$CACHE/rootfs.tar" ]; then
  command -v debootstrap >/dev/null || { echo "image-base: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
  rm -rf "$CACHE.tmp"
  mkdir -p "$CACHE.tmp/rootfs"
  echo "image-base: debootstrap $SUITE from $MIRROR (a few minutes, once)" >&2
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$CACHE.tmp/rootfs" "$MIRROR" >"$CACHE.tmp/debootstrap.log" 2>&1 ||
    { tail -20 "$CACHE.tmp/debootstrap.log" >&2; exit 1; }
  root="$CACHE.tmp/rootfs"
  install -m 0755 "$NODE_BIN" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$NPM_DIR" "$root/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  # Smaller: no apt lists, docs or caches in the base.
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/*
  tar -C "$root" -cf "$CACHE.tmp/rootfs.tar" .
  rm -rf "$root"
  rm -rf "$CACHE"
  mv "$CACHE.tmp" "$CACHE"
fi

podman import --change 'CMD ["/bin/bash"]' --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$CACHE/rootfs.tar" "$IMAGE" >/dev/null
echo "$IMAGE"
