#!/usr/bin/env bash
# Installs the client libraries the README's snippets use into the build
# output (never system-wide), once, and prints the folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${CARGO_TARGET_DIR:-$PWD/target}/clients
mkdir -p "$out"
# Tests run in parallel: one install at a time, the others wait for it.
exec 9>"$out/.lock"
flock 9
# Installed means importable, not just a folder that exists.
if ! PYTHONPATH="$out/python" python3 -c "import redis; assert redis.__file__.startswith('$out/python')" 2>/dev/null; then
  rm -rf "$out/python"
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location --root-user-action=ignore \
    --target "$out/python" "redis==5.2.1" >&2
fi
if ! (cd "$out/node" 2>/dev/null && node -e 'require("ioredis"); require("redis"); require("typescript")' 2>/dev/null); then
  rm -rf "$out/node" && mkdir -p "$out/node"
  npm install --silent --no-audit --no-fund --prefix "$out/node" \
    ioredis@5.4.2 redis@4.7.0 typescript@5.6.3 @types/node@20.17.10 >&2
fi
echo "$out"
