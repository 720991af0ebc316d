#!/usr/bin/env bash
# Runs the integration tests against redis-servers under valgrind (memcheck,
# with jemalloc's malloc intercepted) and fails on any leak definitely lost
# or any invalid access; then the lazyfree cases under helgrind, failing on
# any data race reported in the module's frames. `make valgrind`.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d /tmp/guard-valgrind.XXXXXX)
export GUARD_SERVER_WRAPPER="valgrind --suppressions=$PWD/tests/valgrind.supp --leak-check=full --errors-for-leak-kinds=definite --soname-synonyms=somalloc=libjemalloc.so* --log-file=$logs/%p.log"
# Fewer calls than `make test`: valgrind is ~30x slower. The contention,
# cluster and replication tests are timing-bound and stay out, as do the
# two sliding-window tests that race a 2-second window or a replica.
export GUARD_FUZZ_CALLS=3000 GUARD_SOAK_CALLS=3000
cargo test --release --test mon --test coupon --test registration --test operations \
  --test hardening --test fuzz --test throttle --test campaign --test campaign_copies --test acl \
  --test campaign_attacks --test alert --test slidecheck -- --test-threads=2 \
  --skip a_burst_that_straddles_a_fixed_window --skip a_replica_held_back_and_an_aof_reload

servers=$(ls "$logs" | wc -l)
definite=$(grep -h "definitely lost:" "$logs"/*.log | grep -vc "definitely lost: 0 bytes" || true)
invalid=$( (grep -lE "Invalid (read|write|free)|uninitialised|Mismatched free" "$logs"/*.log || true) | wc -l)
module_frames=$(grep -h -A30 -E "Invalid|definitely lost in" "$logs"/*.log | grep -c "libredis_guard" || true)
echo "valgrind: $servers servers, $definite with definite leaks, $invalid with invalid accesses, $module_frames module frames in error reports"
if [ "$definite" -ne 0 ] || [ "$invalid" -ne 0 ]; then
  echo "see $logs"; exit 1
fi
rm -rf "$logs"

# Helgrind: values copied and written on the main thread while others are
# freed on the lazyfree thread (FLUSHDB ASYNC, UNLINK).
races=$(mktemp -d /tmp/guard-helgrind.XXXXXX)
GUARD_SERVER_WRAPPER="valgrind --tool=helgrind --log-file=$races/%p.log" GUARD_LAZYFREE_ROUNDS=3 \
  cargo test --release --test campaign_attacks lazyfree -- --test-threads=1
reported=$(grep -h -A30 "Possible data race" "$races"/*.log | grep -c "Possible data race" || true)
in_module=$(awk '/Possible data race/ {report = 1; hit = 0}
  report && /libredis_guard/ && !hit {count++; hit = 1}
  /^==[0-9]+== $/ && report && hit {report = 0}
  END {print count + 0}' "$races"/*.log)
echo "helgrind: $reported possible data races, $in_module with module frames"
if [ "$in_module" -ne 0 ]; then
  echo "see $races"; exit 1
fi
rm -rf "$races"
