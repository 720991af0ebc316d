#!/usr/bin/env bash
# Installs one set of client libraries for the package's tests into the
# build output (never system-wide), once, and prints its folder:
#   oldest  redis-py 5.0.0 (the oldest release supported)
#   newest  redis-py 8.1.0, mypy for the type checks, and FastAPI
#           (Starlette, httpx) for the web middleware's tests
# Both with valkey-glide 2.5.3 (sync and asyncio) and pytest.
set -euo pipefail
cd "$(dirname "$0")/../../.."
set=$1
case $set in
  oldest) packages=("redis==5.0.0") ;;
  newest) packages=("redis==8.1.0" "mypy==2.4.1" "fastapi==0.163.2" "starlette==1.10.0" "httpx==0.28.1") ;;
  *) echo "usage: $0 oldest|newest" >&2; exit 2 ;;
esac
packages+=("valkey-glide==2.5.3" "valkey-glide-sync==2.5.3" "pytest==9.2.0")
out=${CARGO_TARGET_DIR:-$PWD/target}/clients/python-$set
mkdir -p "$out"
exec 9>"$out.lock"
flock 9
# Installed means these exact versions import from this folder.
stamp="$out/.installed"
if [ "$(cat "$stamp" 2>/dev/null)" != "${packages[*]}" ]; then
  rm -rf "$out" && mkdir -p "$out"
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --root-user-action=ignore --target "$out" "${packages[@]}" >&2
  echo "${packages[*]}" >"$stamp"
fi
echo "$out"
