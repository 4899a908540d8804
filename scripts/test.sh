#!/usr/bin/env bash
# All checks and tests: formatting, clippy (host and wasm targets, linted as they are built),
# plugins, the instruction-count gate, every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# One build, no incremental state: it would only take disk (GBs) for a build nobody repeats.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
echo "disk before: $(df -h --output=avail . | tail -1 | tr -d ' ') free"
# Each phase's wall time, printed as it ends (where CI's minutes go).
phase_start=$SECONDS
phase() { echo "phase: $1 took $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }
scripts/install-deps.sh
phase install-deps
cargo fmt --all --check
# Clippy lints while the builds compile: clippy-driver compiles every crate of the workspace
# (the host, the tests, the benches, the wasm plugins and fixtures) and denies any warning,
# which is what `cargo clippy --all-targets -- -D warnings` checks, without a second
# check-only build of every dependency (~4 minutes on 2 cores). Every cargo command below runs
# with the same wrapper, so none rebuilds what another built.
RUSTC_WORKSPACE_WRAPPER="$(rustup which clippy-driver)"
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# tests/build.rs builds the Rust plugins too (so a plain `cargo test` needs nothing else):
# told so, its nested cargo keeps the wrapper and finds the plugins built below fresh.
export HAK_NESTED_LINT=1
# hedera-proto 0.20 and hiero-sdk-proto 0.22 name their own OUT_DIR among the paths that make
# their build scripts run again, and write into it while running: every cargo command would
# regenerate them and recompile everything above them (~55 s each time). Their output depends
# only on the crates' own .proto files, so after each build the generated files are dated
# back, and the next command finds them fresh.
settle() {
  find target/debug/build/hedera-proto-*/out target/debug/build/hiero-sdk-proto-*/out \
    -exec touch -h -d 2001-01-01 {} + 2>/dev/null || true
}
scripts/build-plugins.sh rust
phase rust-plugins
# Build every test first: the Go plugins are built with the very `hak` the tests use.
cargo test --quiet --workspace --no-run
settle
# The benches (the gate's build profile, the whole workspace's features, as the tests):
# compiled, so linted, beside the tests.
cargo bench --quiet --profile dev --workspace --no-run
settle
phase build-tests-and-lint
# The gate's runner (gungraun-runner: ~70 s to compile when it is not in the cargo home's
# cache yet) builds beside the JS, Go and Python plugin builds, which leave a core idle part
# of the time.
scripts/instruction-gate.sh --install-runner > target/gungraun-runner-install.log 2>&1 &
runner_install=$!
HAK_BIN=target/debug/hak scripts/build-plugins.sh js go python
phase js-go-python-plugins
wait "$runner_install" || { cat target/gungraun-runner-install.log >&2; exit 1; }
# Speed has a gate: instruction counts of the call path against a committed baseline. It
# runs one valgrind process (one core) beside the npm installs (node: one core, ~30 s).
scripts/instruction-gate.sh > target/instruction-gate.log 2>&1 &
gate=$!
# The official JS SDK is one of the emulator's clients under test.
(cd emulator/tests/js-sdk && npm ci --no-audit --no-fund --loglevel=error)
# solc-js and OpenZeppelin: the emulator's genesis factories are checked against their source.
(cd emulator/contracts && npm ci --no-audit --no-fund --loglevel=error)
# The JS kit itself: the conformance test compares its transaction bodies with hak's.
(cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error)
# The official TypeScript MCP client: tests/all/mcp.rs drives it against `hak mcp`.
(cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error)
# puppeteer-core: tests/all/console.rs drives the console in Debian's chromium with it.
(cd tests/console && npm ci --no-audit --no-fund --loglevel=error)
phase npm
gate_status=0
wait "$gate" || gate_status=$?
cat target/instruction-gate.log
[ "$gate_status" = 0 ] || exit "$gate_status"
settle
phase instruction-gate
mkdir -p target
# A plain `cargo test` needs only Rust (tests/build.rs builds the Rust plugins); the tests
# that need node/npm, Go, redis-server, docker-registry or the Python clients are #[ignore]d there with the
# reason. Here they run too, unless a tool is missing (then they are skipped, and this says so).
missing=""
for tool in node npm redis-server docker-registry chromium; do command -v "$tool" >/dev/null || missing="$missing $tool"; done
[ -n "$(scripts/go-path.sh)" ] || missing="$missing go"
[ -x target/tools/componentize-py-venv/bin/componentize-py ] || missing="$missing componentize-py"
[ -x target/tools/py-venv/bin/python ] || missing="$missing python-clients"
include=(--include-ignored)
if [ -n "$missing" ]; then
  echo "SKIPPING the tests that need:$missing (scripts/install-deps.sh installs them)"
  include=()
fi
# Four test threads on two cores: most end-to-end tests wait (on a Redis failover, an npm
# client, a registry, a build), so two threads left the cores idle; the tests phase took
# ~330 s with two threads and takes ~260 s with four.
status=0
cargo test --workspace -- "${include[@]}" --test-threads=4 2>&1 | tee target/test-output.log || status=$?
phase tests
if [ "$status" -ne 0 ]; then
  # A failing test's message can sit far above the end of a long log (behind a backtrace):
  # repeat each panic's first lines last, where a truncated CI log still shows them.
  echo "tests failed (exit $status); the panics, once more:"
  grep -A4 "panicked at" target/test-output.log | cut -c1-600 | head -80 || true
  exit "$status"
fi
echo "disk after: $(df -h --output=avail . | tail -1 | tr -d ' ') free; target/ holds $(du -sh target | cut -f1)"
# One closing line for the whole workspace (cargo prints one "test result" per test target).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed;?$/) p += $i; if ($(i+1) ~ /^failed;?$/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f; if (p == 0) exit 1 }' target/test-output.log
