#!/usr/bin/env bash
# Installs one client set for the Node package's tests into the build
# output (never system-wide), once per version, and prints its folder:
#   clients/node/test/install.sh ioredis-5.0.0 | ioredis-5.10.1 | ioredis-6.1.0 | redis-4.0.0 | redis-5.12.1 | redis-6.4.0 | tools | web
# Each set holds its client library and redis-guard, installed the way a
# user installs it: `npm install <checkout>/clients/node`. `tools` holds
# TypeScript and both newest clients, for the example program and the
# check that the committed dist/ is the build of src/. `web` holds the web
# frameworks and rate limiting libraries the subpath exports plug into.
set -euo pipefail
set_name=${1:?usage: install.sh SET}
package=$(cd "$(dirname "$0")/.." && pwd -P)
repo=$(cd "$package/../.." && pwd)
out=${CARGO_TARGET_DIR:-$repo/target}/clients
dir="$out/node-$set_name"
case "$set_name" in
  ioredis-5.0.0 | ioredis-5.10.1 | ioredis-6.1.0 | redis-4.0.0 | redis-5.12.1 | redis-6.4.0)
    libraries=("${set_name%-*}@${set_name##*-}") ;;
  tools)
    libraries=(ioredis@6.1.0 redis@6.4.0 typescript@5.6.3 @types/node@20.17.10) ;;
  web)
    libraries=(ioredis@6.1.0 express@5.3.0 fastify@5.12.8 express-rate-limit@8.7.4 rate-limiter-flexible@11.4.0 @types/express@5.0.6 @types/node@20.17.10) ;;
  *) echo "unknown set $set_name" >&2; exit 2 ;;
esac
mkdir -p "$out"
# Tests run in parallel: one install at a time, the others wait for it.
exec 9>"$out/.node-lock"
flock 9
# Installed means each library loads at its version and redis-guard is
# this checkout's package (a build folder shared by two checkouts must not
# test the other one).
installed() {
  (cd "$dir" 2>/dev/null && node -e '
    const [pkg, libs] = [process.argv[1], process.argv.slice(2)];
    const fs = require("fs"), path = require("path");
    for (const lib of libs) {
      const at = lib.lastIndexOf("@"), name = lib.slice(0, at), version = lib.slice(at + 1);
      // Read from disk: some packages (express-rate-limit) export no ./package.json.
      const json = JSON.parse(fs.readFileSync(path.join("node_modules", name, "package.json"), "utf8"));
      if (json.version !== version) process.exit(1);
    }
    if (fs.realpathSync(path.dirname(require.resolve("redis-guard/package.json"))) !== pkg) process.exit(1);
  ' "$package" "${libraries[@]}") 2>/dev/null
}
if ! installed; then
  rm -rf "$dir" && mkdir -p "$dir"
  echo '{"name": "redis-guard-tests", "private": true}' > "$dir/package.json"
  npm install --silent --no-audit --no-fund --prefix "$dir" "${libraries[@]}" "$package" >&2
  installed || { echo "install of $set_name did not take" >&2; exit 1; }
fi
echo "$dir"
