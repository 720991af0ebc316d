#!/usr/bin/env bash
# `make test`'s proof that the live-server fuzzer (tests/fuzz.rs) can fail:
# a build in which every valid MON.INCRCHECK panics (feature
# test-panic-incrcheck; the panic is caught and answered as `ERR
# redis-guard internal error`) must make it FAIL, naming that reply.
# The build has its own folder, seeded on first use with the dependencies
# the normal build already compiled (only this crate is built again).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR=${TARGET_DIR:-${CARGO_TARGET_DIR:-$PWD/target}}
proof=$TARGET_DIR/panic-proof
if [ ! -d "$proof/release/.fingerprint" ]; then
  mkdir -p "$proof/release/deps"
  cp -a "$TARGET_DIR/release/build" "$TARGET_DIR/release/.fingerprint" "$proof/release/"
  # Libraries and their dep-info, not the test executables.
  find "$TARGET_DIR/release/deps" -maxdepth 1 -type f \
    \( -name '*.rlib' -o -name '*.rmeta' -o -name '*.so' -o -name '*.d' \) \
    -exec cp -a -t "$proof/release/deps/" {} +
fi
cargo build --release --quiet --features test-panic-incrcheck --target-dir "$proof"
log=$proof/fuzz.log
if GUARD_MODULE=$proof/release/libredis_guard.so GUARD_FUZZ_CALLS=2000 \
  cargo test --release --quiet --test fuzz -- --exact random_calls_never_crash_and_errors_change_nothing \
  >"$log" 2>&1; then
  echo "fuzz-proof: the fuzzer PASSED against a module whose MON.INCRCHECK panics (see $log)" >&2
  exit 1
fi
if ! grep -q "redis-guard internal error" "$log"; then
  echo "fuzz-proof: the fuzzer failed, but not on the caught panic (see $log)" >&2
  exit 1
fi
echo "fuzz-proof: the fuzzer fails on a caught panic, as it must: $(grep -m1 -o 'fuzz failure: [^:]*: [^ ]*' "$log")"
