#!/usr/bin/env bash
# Build weval (the WebAssembly partial evaluator componentize-js uses for `hak-js-build --aot`)
# from crates.io into the cargo home, by version, as scripts/instruction-gate.sh keeps its
# runner: ~13 minutes of compiling on two cores, once per machine. componentize-js's own npm
# package would download a binary from GitHub, which this machine cannot reach.
# guest-sdk/js/bin/build.js looks for it there (or where HAK_WEVAL points).
set -euo pipefail
version=0.5.1
root="${CARGO_HOME:-$HOME/.cargo}/hak-tools/weval-$version"
if "$root/bin/weval" --version 2>/dev/null | grep -q "$version"; then
  echo "weval $version: $root/bin/weval"
  exit 0
fi
env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS \
  cargo install --quiet --locked weval --version "=$version" --root "$root"
echo "weval $version: $root/bin/weval"
