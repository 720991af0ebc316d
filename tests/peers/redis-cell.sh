#!/usr/bin/env bash
# Builds redis-cell 0.2.2 (crates.io), the peer CL.THROTTLE is tested and
# benchmarked against, into the build output, and prints the module's path.
# Already built: prints it at once. Its code is fetched, never committed.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=0.2.2
out=${CARGO_TARGET_DIR:-$PWD/target}/peers
module=$out/redis-cell-$version/target/release/libredis_cell.so
if [ -f "$module" ]; then
  echo "$module"
  exit 0
fi
mkdir -p "$out/fetch/src"
# A throwaway package that depends on the peer, so cargo fetches its source.
cat >"$out/fetch/Cargo.toml" <<TOML
[package]
name = "fetch-peers"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
redis-cell = "=$version"

[workspace]
TOML
: >"$out/fetch/src/lib.rs"
cargo fetch --quiet --manifest-path "$out/fetch/Cargo.toml" >&2
manifest=$(cargo metadata --quiet --format-version 1 --manifest-path "$out/fetch/Cargo.toml" |
  grep -o "\"manifest_path\":\"[^\"]*/redis-cell-$version/Cargo.toml\"" | head -n 1 | cut -d'"' -f4)
[ -n "$manifest" ] || { echo "redis-cell $version: source not found after cargo fetch" >&2; exit 1; }
rm -rf "$out/redis-cell-$version"
cp -r "$(dirname "$manifest")" "$out/redis-cell-$version"
chmod -R u+w "$out/redis-cell-$version"
# Its own workspace, so it does not join this one.
printf '\n[workspace]\n' >>"$out/redis-cell-$version/Cargo.toml"
# Its 2018-era code warns a lot on today's compiler; its lints are not ours.
# Its own target folder, whatever CARGO_TARGET_DIR says.
RUSTFLAGS="--cap-lints=allow" cargo build --quiet --release --manifest-path "$out/redis-cell-$version/Cargo.toml" \
  --target-dir "$out/redis-cell-$version/target" >&2
echo "$module"
