#!/usr/bin/env bash
# The distribution as a user gets it from an index: a wheel and an sdist
# built with `python3 -m build` (the wheel from the sdist, so a file the
# sdist leaves out is missing from the wheel too), each installed with pip
# into a fresh folder of its own (--target, no dependency: the tests put
# redis-py 8.1.0 and valkey-glide 2.5.3 of tests/install.sh newest beside
# it). Into the build output; built again only when the sources change.
# Prints three lines: the folder of the built files, the wheel's install,
# the sdist's install.
#   clients/python/tests/install-packed.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
repo=$PWD
out=${CARGO_TARGET_DIR:-$repo/target}/clients
tools="$out/python-packaging"
dir="$out/python-packed"
mkdir -p "$out"
exec 9>"$out/python-packed.lock"
flock 9
pip=(python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location --root-user-action=ignore)
# The build frontend and a setuptools that writes wheels itself, once.
tool_versions="build==1.2.2.post1 setuptools==80.9.0"
if [ "$(cat "$tools/.installed" 2>/dev/null)" != "$tool_versions" ]; then
  rm -rf "$tools" && mkdir -p "$tools"
  # shellcheck disable=SC2086
  "${pip[@]}" --target "$tools" $tool_versions >&2
  echo "$tool_versions" >"$tools/.installed"
fi
# Built from a copy laid out as the repository is (setup.py bundles
# ../scripts into redis_guard/lua): building writes into the source
# folder, which other tests import meanwhile.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/clients/python"
cp -R clients/scripts "$stage/clients/scripts"
cp -R clients/python/{pyproject.toml,setup.py,README.md,redis_guard} "$stage/clients/python/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$stage/clients/python/redis_guard/lua"
stamp=$( (cd "$stage" && find . -type f | LC_ALL=C sort | xargs sha256sum; echo "$tool_versions") | sha256sum | cut -d' ' -f1)
if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$dir" && mkdir -p "$dir/dist"
  PYTHONPATH="$tools" python3 -m build --no-isolation --outdir "$dir/dist" "$stage/clients/python" >"$dir/build.log" 2>&1 ||
    { cat "$dir/build.log" >&2; exit 1; }
  PYTHONPATH="$tools" "${pip[@]}" --no-deps --target "$dir/from-wheel" "$dir"/dist/*.whl >&2
  PYTHONPATH="$tools" "${pip[@]}" --no-deps --no-build-isolation --target "$dir/from-sdist" "$dir"/dist/*.tar.gz >&2
  echo "$stamp" >"$dir/.installed"
fi
printf '%s\n' "$dir/dist" "$dir/from-wheel" "$dir/from-sdist"
