#!/usr/bin/env bash
# make bench-web: bench/clients/web.mjs against a fresh redis-server with
# the module (MODULE, default the release build) on a free port, from the
# `web` client set (clients/node/test/install.sh web); writes its table
# to bench/RESULTS-web.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
module=${MODULE:-${CARGO_TARGET_DIR:-$repo/target}/release/libredis_guard.so}
web=$(clients/node/test/install.sh web)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
  --loadmodule "$module" >"$dir/log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
(cd "$web" && REDIS_URL="redis://127.0.0.1:$port" node "$repo/bench/clients/web.mjs") >bench/RESULTS-web.md
cat bench/RESULTS-web.md
