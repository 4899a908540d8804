#!/usr/bin/env bash
# Build every example plugin of every language (and the test fixtures) as components into
# target/plugins/<lang>/<name>.wasm: rust (cargo, wasm32-wasip2), js (componentize-js 0.23 via
# guest-sdk/js, after `npm ci` there) and go (Go 1.27 from scripts/install-deps.sh, then
# `hak plugin build`) and python (componentize-py 0.25.1 from scripts/install-deps.sh, through
# `hak plugin build`). `scripts/build-plugins.sh rust` builds Rust only, `… js go` those two;
# `… js-aot` builds the JS ones ahead-of-time compiled (`hak-js-build --aot`, needs
# scripts/install-weval.sh) into target/plugins/js-aot (not part of the default set).
set -euo pipefail
cd "$(dirname "$0")/.."
langs="${*:-rust js go python}"
if [[ " $langs " == *" rust "* ]]; then
  out=target/plugins/rust
  mkdir -p "$out" target/plugins/fixtures
  crates=()
  for dir in example-plugins/rust/*/ tests/fixtures/*/; do
    [ -f "$dir/Cargo.toml" ] || continue
    crates+=(-p "$(sed -n 's/^name = "\(.*\)"/\1/p' "$dir/Cargo.toml" | head -1)")
  done
  # The target dir tests/build.rs uses too (a `cargo test` builds these same plugins itself).
  cargo build --quiet --profile plugin --target wasm32-wasip2 --target-dir target/plugin-build "${crates[@]}"
  for dir in example-plugins/rust/*/; do
    name=$(basename "$dir")
    cp "target/plugin-build/wasm32-wasip2/plugin/hak_plugin_${name//-/_}.wasm" "$out/$name.wasm"
  done
  for dir in tests/fixtures/*/; do
    [ -f "$dir/Cargo.toml" ] || continue
    name=$(basename "$dir")
    cp "target/plugin-build/wasm32-wasip2/plugin/hak_fixture_${name//-/_}.wasm" "target/plugins/fixtures/$name.wasm"
  done
  ls -1 "$out"/*.wasm target/plugins/fixtures/*.wasm 2>/dev/null | sed 's/^/built /'
fi
# JS plugins into $1 with build.js's further arguments.
js_plugins() {
  local out=$1 src name
  shift
  mkdir -p "$out"
  [ -d guest-sdk/js/node_modules/@bytecodealliance/componentize-js ] ||
    (cd guest-sdk/js && npm ci --no-audit --no-fund --loglevel=error)
  for src in example-plugins/js/*.js; do
    name=$(basename "$src" .js)
    # Rebuild only when the plugin or the SDK changed (componentize takes seconds per plugin).
    if [ ! -f "$out/$name.wasm" ] || [ -n "$(find "$src" guest-sdk/js/src guest-sdk/js/bin wit -newer "$out/$name.wasm" 2>/dev/null | head -1)" ]; then
      node guest-sdk/js/bin/build.js "$src" -o "$out/$name.wasm" "$@" >/dev/null
    fi
    echo "built $out/$name.wasm"
  done
}
if [[ " $langs " == *" js "* ]]; then js_plugins target/plugins/js; fi
if [[ " $langs " == *" js-aot "* ]]; then js_plugins target/plugins/js-aot --aot; fi
if [[ " $langs " == *" go "* ]]; then
  out=target/plugins/go
  mkdir -p "$out"
  go_bin="${HAK_GO:-$(scripts/go-path.sh)}"
  [ -n "$go_bin" ] || { echo "no Go toolchain: run scripts/install-deps.sh" >&2; exit 1; }
  # HAK_BIN: a hak already built (scripts/test.sh passes the one `cargo test` built, so the
  # host is not compiled a second time with another feature set).
  hak_bin="${HAK_BIN:-}"
  if [ -z "$hak_bin" ]; then
    cargo build --quiet -p hak-host --bin hak
    hak_bin=target/debug/hak
  fi
  for dir in example-plugins/go/*/; do
    name=$(basename "$dir")
    HAK_GO="$go_bin" "$hak_bin" plugin build "$dir" -o "$out/$name.wasm" >/dev/null
    echo "built $out/$name.wasm"
  done
fi
if [[ " $langs " == *" python "* ]]; then
  out=target/plugins/python
  mkdir -p "$out"
  cpy="${HAK_COMPONENTIZE_PY:-target/tools/componentize-py-venv/bin/componentize-py}"
  [ -x "$cpy" ] || { echo "no componentize-py: run scripts/install-deps.sh" >&2; exit 1; }
  hak_bin="${HAK_BIN:-}"
  if [ -z "$hak_bin" ]; then
    cargo build --quiet -p hak-host --bin hak
    hak_bin=target/debug/hak
  fi
  for dir in example-plugins/python/*/; do
    name=$(basename "$dir")
    # Rebuild only when the plugin or the SDK changed (componentize-py takes ~13 s a plugin).
    if [ ! -f "$out/$name.wasm" ] || [ -n "$(find "$dir" guest-sdk/python/hak_guest wit -newer "$out/$name.wasm" -name '*.py' -o -newer "$out/$name.wasm" -name '*.wit' 2>/dev/null | head -1)" ]; then
      HAK_COMPONENTIZE_PY="$cpy" "$hak_bin" plugin build "$dir" -o "$out/$name.wasm" >/dev/null
    fi
    echo "built $out/$name.wasm"
  done
fi
