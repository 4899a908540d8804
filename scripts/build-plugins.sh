#!/usr/bin/env bash
# Build every example plugin (and the test fixtures) as components into target/plugins/<lang>/<name>.wasm.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/plugins/rust
mkdir -p "$out" target/plugins/fixtures
crates=()
for dir in example-plugins/rust/*/ tests/fixtures/*/; do
  [ -f "$dir/Cargo.toml" ] || continue
  crates+=(-p "$(sed -n 's/^name = "\(.*\)"/\1/p' "$dir/Cargo.toml" | head -1)")
done
cargo build --quiet --profile plugin --target wasm32-wasip2 "${crates[@]}"
for dir in example-plugins/rust/*/; do
  name=$(basename "$dir")
  cp "target/wasm32-wasip2/plugin/hak_plugin_${name//-/_}.wasm" "$out/$name.wasm"
done
for dir in tests/fixtures/*/; do
  [ -f "$dir/Cargo.toml" ] || continue
  name=$(basename "$dir")
  cp "target/wasm32-wasip2/plugin/hak_fixture_${name//-/_}.wasm" "target/plugins/fixtures/$name.wasm"
done
ls -1 "$out"/*.wasm target/plugins/fixtures/*.wasm 2>/dev/null | sed 's/^/built /'
