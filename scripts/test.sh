#!/usr/bin/env bash
# All checks and tests: formatting, clippy (host and wasm targets), plugins, every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo fmt --all --check
scripts/build-plugins.sh
cargo clippy --quiet --workspace --all-targets -- -D warnings
cargo clippy --quiet --target wasm32-wasip2 -p hak-guest \
  $(for d in example-plugins/rust/*/ tests/fixtures/*/; do sed -n 's/^name = "\(.*\)"/-p \1/p' "$d/Cargo.toml" | head -1; done) \
  -- -D warnings
cargo test --workspace
