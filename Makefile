# redis-guard: `make run` to try it, `make test` to prove it.
SHELL := /bin/bash
# Cargo's output folder: CARGO_TARGET_DIR when set, as cargo itself does.
TARGET_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target))
MODULE := $(TARGET_DIR)/release/libredis_guard.so
APT_PACKAGES := redis-server redis-tools libclang-dev faketime

.PHONY: all deps build run test fuzz-proof test-matrix test-cluster lab bench bench-clients bench-web profile fuzz fuzz-pure soak campaign-scale valgrind lint clean

all: build

# Installs what a fresh Debian machine lacks: Redis (server, cli,
# benchmark), libclang for bindgen and faketime (the tests' servers whose
# clock is behind or steps). Cargo itself must be there.
deps:
	@command -v cargo >/dev/null || { echo "cargo not found: install Rust from rustup.rs first"; exit 1; }
	@missing=""; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	command -v redis-cli >/dev/null && command -v redis-benchmark >/dev/null || missing="$$missing redis-tools"; \
	dpkg -s libclang-dev >/dev/null 2>&1 || missing="$$missing libclang-dev"; \
	command -v faketime >/dev/null || missing="$$missing faketime"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	  else \
	    echo "missing:$$missing"; echo "run: sudo apt-get install -y $(APT_PACKAGES)"; exit 1; \
	  fi; \
	fi

build: deps
	cargo build --release

# Redis in the foreground with the module, on 127.0.0.1:6379. Paths are
# absolute, so `make -C /path/to/redis-guard run` works from any folder.
run: build
	redis-server $(CURDIR)/redis.conf --loadmodule $(MODULE)

# Unit tests, then integration tests against real redis-servers that the
# tests start on free loopback ports; then the proof that the fuzzer fails
# against a build whose MON.INCRCHECK panics; then active defragmentation
# on Redis 8.2 (fetched as make test-matrix does), the one server here
# built to defragment.
test: build
	cargo test --release
	TARGET_DIR=$(TARGET_DIR) tests/fuzz-proof.sh
	redis82=$$(TARGET_DIR=$(TARGET_DIR) tests/matrix.sh --path redis-8.2) && \
	  GUARD_SERVER=$$redis82 cargo test --release --test defrag -- --nocapture

# That proof alone (the fuzz suite must have been built: make test does).
fuzz-proof: build
	TARGET_DIR=$(TARGET_DIR) tests/fuzz-proof.sh

# The whole integration suite on every server the module supports:
# Redis 7.0 (Debian's), 8.2, Valkey 8.0, 8.1 and 9.1, fetched into
# $(TARGET_DIR)/servers without root. Ends with a table of results and one
# of each test binary's seconds per server. GUARD_MATRIX_JOBS=2 runs two
# servers at once; GUARD_MATRIX_SKIP leaves some out (tests/matrix.sh).
test-matrix: build
	TARGET_DIR=$(TARGET_DIR) tests/matrix.sh

# Resharding (MIGRATE with ASK; CLUSTER MIGRATESLOTS on Valkey 9+) and
# three killed primaries, under load from every family, on Redis 7.0 and
# Valkey 9.1 (obtained as make test-matrix does).
test-cluster: build
	GUARD_SERVER=redis-server cargo test --release --test cluster_ops -- --nocapture
	valkey=$$(TARGET_DIR=$(TARGET_DIR) tests/matrix.sh --path valkey-9.1) && \
	  GUARD_SERVER=$$valkey cargo test --release --test cluster_ops -- --nocapture

# The races, reproduced: naive steps vs Lua vs native, as markdown tables.
lab: build
	cargo bench --quiet --bench lab

# Native vs INCRBY/SADD vs Lua (EVALSHA, FCALL): writes bench/RESULTS.md.
# GUARD_BENCH_ONLY=memory, campaigns, quota (the rows of CL.QUOTA,
# calendar windows, CL.REFUND and BLOCK) or scripts (the packages' scripts
# against the module and the Lua twins) prints that table alone, in a few
# minutes, and leaves RESULTS.md as it is.
bench: build
	cargo bench --quiet --bench bench

# The client packages in a 3-primary cluster, sequential and pipelined:
# their MON.INCRCHECK, CL.THROTTLE and COUPON.RESERVE against INCRBY and
# the Lua twins through the same client, with the server commands each
# call cost. Writes its section of bench/RESULTS.md.
bench-clients: build
	cargo bench --quiet --bench bench_clients

# An Express route with redis-guard/express's rateLimit against the same
# route without it (requests/s), and localBlock under a flood from one key
# (CL.THROTTLE calls the server counted). Writes bench/RESULTS-web.md.
bench-web: build
	CARGO_TARGET_DIR=$(TARGET_DIR) MODULE=$(MODULE) bench/clients/web.sh

# Instructions per request under callgrind, native vs INCRBY/SADD.
profile: build
	bench/profile.sh

# The live-server fuzzer, long: 1M random calls, a fresh seed each run
# (printed; rerun one with GUARD_FUZZ_SEED=...).
fuzz: build
	GUARD_FUZZ_CALLS=$${GUARD_FUZZ_CALLS:-1000000} GUARD_FUZZ_SEED=$${GUARD_FUZZ_SEED:-$$(date +%s)} \
	  cargo test --release --test fuzz -- --nocapture

# libFuzzer on the pure parts (argument parsing, rules, the campaign's
# decoder and model), 60 s a target.
# Stable Rust: no sanitizer, coverage-guided all the same.
fuzz-pure:
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
	cd fuzz && for target in parse_args rules campaign_decode campaign_model; do \
	  cargo fuzz run -s none -O $$target -- -max_total_time=$${FUZZ_SECONDS:-60} || exit 1; \
	done

# A campaign of 1M holds and a mass expiry, then one user with 100k: counts
# stay exact, work per call stays bounded; prints bytes per claim and the
# slowest calls.
campaign-scale: build
	GUARD_SCALE_CLAIMS=$${GUARD_SCALE_CLAIMS:-1000000} \
	GUARD_SCALE_USER_CLAIMS=$${GUARD_SCALE_USER_CLAIMS:-100000} \
	  cargo test --release --test campaign_scale -- --nocapture

# 1M valid calls of each command: used memory must stay flat.
soak: build
	GUARD_SOAK_CALLS=$${GUARD_SOAK_CALLS:-1000000} \
	  cargo test --release --test hardening valid_calls_leave_memory_flat -- --nocapture

# The integration tests against servers under valgrind: no leak, no invalid access.
valgrind: build
	command -v valgrind >/dev/null || apt-get install -y -qq valgrind
	tests/valgrind.sh

# Clippy covers every target, the programs under bench/ too; those are
# built (not run) so a broken bench fails here rather than at make bench.
lint:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo bench --no-run --quiet

clean:
	cargo clean
