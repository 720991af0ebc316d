#!/usr/bin/env bash
# The package as a user gets it from a registry: `npm pack` of this
# checkout's clients/node (its prepack copies clients/scripts in), then
# `npm install` of that tarball into a fresh folder beside the current
# releases of both clients, ioredis 6.1.0 and node-redis 6.4.0, with no
# --legacy-peer-deps (npm resolves the package's peers against them or
# fails with ERESOLVE). Into the build output, again only when the
# tarball's contents change; prints the folder.
#   clients/node/test/install-packed.sh
set -euo pipefail
package=$(cd "$(dirname "$0")/.." && pwd -P)
repo=$(cd "$package/../.." && pwd)
out=${CARGO_TARGET_DIR:-$repo/target}/clients
dir="$out/node-packed"
libraries=(ioredis@6.1.0 redis@6.4.0)
mkdir -p "$out"
exec 9>"$out/.node-packed-lock"
flock 9
# Packed from a copy laid out as the repository is (clients/node beside
# clients/scripts): prepack writes scripts/ into the package folder, and
# other tests read the checkout's meanwhile.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/clients"
cp -R "$repo/clients/scripts" "$stage/clients/scripts"
mkdir "$stage/clients/node"
(cd "$package" && cp -R package.json README.md dist src "$stage/clients/node/")
(cd "$stage/clients/node" && npm pack --silent --pack-destination "$stage" >/dev/null)
tarball=$(ls "$stage"/redis-guard-*.tgz)
# Installed means this very tarball (same bytes) beside those versions.
stamp="$(sha256sum "$tarball" | cut -d' ' -f1) ${libraries[*]}"
if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$dir" && mkdir -p "$dir"
  cp "$tarball" "$dir/redis-guard.tgz"
  echo '{"name": "redis-guard-packed", "private": true}' >"$dir/package.json"
  (cd "$dir" && npm install --loglevel error --no-audit --no-fund ./redis-guard.tgz "${libraries[@]}" >&2)
  echo "$stamp" >"$dir/.installed"
fi
echo "$dir"
