#!/usr/bin/env bash
# Instructions per request, counted by callgrind (repeatable on a noisy
# machine): each command gets its own redis-server under valgrind, N
# pipelined requests, and the server's total minus an idle run's total.
# Usage: bench/profile.sh [requests]   (make profile)
# PROFILE_ONLY=regex keeps the cases whose line matches (e.g. 'throttle|cell').
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
MODULE=${CARGO_TARGET_DIR:-$PWD/target}/release/libredis_guard.so
WORK=${PROFILE_DIR:-$(mktemp -d)}
[ -n "${PROFILE_DIR:-}" ] || trap 'rm -rf "$WORK"' EXIT

total() { # $1: label, rest: command to load (empty: idle)
  local label=$1; shift
  local port=$((20000 + RANDOM % 20000))
  # The redis-cell row loads the peer instead of this module: 0.2.2 from
  # crates.io, or the build GUARD_REDIS_CELL names (as for the tests).
  local module=$MODULE
  [ "$label" = cell ] && module=${GUARD_REDIS_CELL:-$(tests/peers/redis-cell.sh 2>/dev/null)}
  valgrind --tool=callgrind --callgrind-out-file="$WORK/$label.out" \
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --loadmodule "$module" >/dev/null 2>&1 &
  local pid=$!
  until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.2; done
  # The same keys exist in every run, the idle one included: a sold-out
  # event and 1000 counters with a TTL for the refunds to work on.
  redis-cli -p "$port" sadd soldout winner >/dev/null
  redis-cli -p "$port" eval "for i = 0, 999 do redis.call('SET', string.format('chk:%012d', i), 1000000000, 'EX', 86400) end" 0 >/dev/null
  # And two campaigns no call fills, for RESERVE of 1 unit and of 3.
  for campaign in cpnr cpnq; do
    redis-cli -p "$port" coupon.create "$campaign" 1000000000000 peruser 1000000000000 >/dev/null
  done
  if [ $# -gt 0 ]; then
    redis-benchmark -p "$port" -c 10 -n "$N" -P 16 -r 1000 -q "$@" >/dev/null
  fi
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$pid" || true
  callgrind_annotate "$WORK/$label.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}'
}

idle=$(total idle)
printf '| command | instructions per request (callgrind, -P 16) |\n|---|---|\n'
while IFS='|' read -r label command; do
  # shellcheck disable=SC2086
  t=$(total "$label" $command)
  [ "$label" = cell ] && command="$command (redis-cell ${GUARD_REDIS_CELL:-0.2.2})"
  printf '| %s | %d |\n' "$command" $(( (t - idle) / N ))
done < <(grep -E "${PROFILE_ONLY:-.}" <<'CASES'
incrby|INCRBY cnt:__rand_int__ 1
incrcheck|MON.INCRCHECK new:__rand_int__ 1 3600 100 1000
incrcheckday|MON.INCRCHECK day:__rand_int__ 1 day 100 1000 TZ Asia/Seoul
incrcheckutc|MON.INCRCHECK utc:__rand_int__ 1 day 100 1000
quota|CL.QUOTA quo:__rand_int__ 1000 3600
quotaday|CL.QUOTA qday:__rand_int__ 1000 day TZ Asia/Seoul
decrby|DECRBY chk:__rand_int__ 1
decrclamp|MON.DECRCLAMP chk:__rand_int__ 1
sadd|SADD set:__rand_int__ user:__rand_int__
issue|COUPON.ISSUE cpn:__rand_int__ user:__rand_int__ 1000000000
sismember|SISMEMBER soldout user:__rand_int__
soldout|COUPON.ISSUE soldout user:__rand_int__ 1
throttle|CL.THROTTLE thr:__rand_int__ 100 1 60 1
cell|CL.THROTTLE thr:__rand_int__ 100 1 60 1
throttleall|CL.THROTTLEALL 2 tha:__rand_int__ 100 1 60 thd:__rand_int__ 1000 1 86400
slidecheck|MON.SLIDECHECK win:__rand_int__ 1 60 1000000000
distinct|MON.DISTINCT dst:__rand_int__ m:__rand_int__ 86400 1000000000
reserve|COUPON.RESERVE cpnr user:__rand_int__
reserveqty|COUPON.RESERVE cpnq user:__rand_int__ QTY 3
CASES
)
