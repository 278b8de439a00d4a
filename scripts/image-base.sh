#!/usr/bin/env bash
# Builds a local Debian base image with Node for the image smoke test (scripts/image-smoke.sh), on a
# machine where no container registry is reachable: a debootstrap of Debian from its mirror, with this
# machine's node, npm and Node headers (what official node images have under /usr/local) on top.
# Cached: the debootstrap under /var/tmp keyed by its inputs (suite, mirror, packages), the image by
# those, the Node version and this script. Prints the image name on stdout; progress goes to stderr.
set -euo pipefail

SUITE="${DIMSUM_BASE_SUITE:-bookworm}"
MIRROR="${DIMSUM_BASE_MIRROR:-http://deb.debian.org/debian}"
# libstdc++6 for node; ca-certificates for npm and HTTPS calls; passwd for useradd; bubblewrap and
# tini are what the Dockerfile's runtime stage adds on node:22-slim, here already.
PACKAGES="ca-certificates,libstdc++6,passwd,bubblewrap,tini"
NODE_BIN="$(readlink -f "$(command -v node)")"
NPM_DIR="$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)"
# Headers for node-gyp, when a native addon has no prebuilt binary (nodejs.org is not reachable).
NODE_HEADERS="$(dirname "$NODE_BIN")/../include/node"

ROOTFS_KEY="$(printf '%s %s %s' "$SUITE" "$MIRROR" "$PACKAGES" | sha256sum | cut -c1-12)"
ROOTFS="/var/tmp/dimsum-debootstrap-$ROOTFS_KEY/rootfs.tar"
ROOTFS_IMAGE="localhost/dimsum-debootstrap:$ROOTFS_KEY"
KEY="$(printf '%s %s %s %s' "$ROOTFS_KEY" "$("$NODE_BIN" --version)" "$(npm --version)" "$(sha256sum "$0" | cut -c1-64)" | sha256sum | cut -c1-12)"
IMAGE="localhost/dimsum-base:$KEY"

if podman image exists "$IMAGE"; then
  echo "$IMAGE"
  exit 0
fi

if [ ! -f "$ROOTFS" ]; then
  command -v debootstrap >/dev/null || { echo "image-base: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
  work="$(dirname "$ROOTFS").tmp"
  rm -rf "$work"
  mkdir -p "$work/rootfs"
  echo "image-base: debootstrap $SUITE from $MIRROR (several minutes, once)" >&2
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  # Smaller: no apt lists, docs or caches.
  rm -rf "$work"/rootfs/var/lib/apt/lists/* "$work"/rootfs/var/cache/apt/*.bin "$work"/rootfs/usr/share/doc/* "$work"/rootfs/usr/share/man/*
  tar -C "$work/rootfs" -cf "$work/rootfs.tar" .
  rm -rf "$work/rootfs"
  rm -rf "$(dirname "$ROOTFS")"
  mv "$work" "$(dirname "$ROOTFS")"
fi

if ! podman image exists "$ROOTFS_IMAGE"; then
  podman import "$ROOTFS" "$ROOTFS_IMAGE" >/dev/null 2>&1
fi

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$NODE_BIN" "$context/node"
cp -a "$NPM_DIR" "$context/npm"
mkdir -p "$context/include"
[ -f "$NODE_HEADERS/common.gypi" ] && cp -a "$NODE_HEADERS" "$context/include/node"
cat >"$context/Containerfile" <<CONTAINERFILE
FROM $ROOTFS_IMAGE
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY include /usr/local/include
RUN ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["/bin/bash"]
CONTAINERFILE
podman build --runtime runc --network none -q -t "$IMAGE" "$context" >/dev/null
echo "$IMAGE"
