#!/usr/bin/env bash
# Regenerate the stage JSON types the SDKs ship (and their JSON Schemas in docs/) from the
# tools' own schemas; a host test fails while they are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
hak=(cargo run --quiet -p hak-host --bin hak --)
mkdir -p guest-sdk/go/tools
"${hak[@]}" tools --shapes ts > guest-sdk/js/src/tools.d.ts
"${hak[@]}" tools --shapes go > guest-sdk/go/tools/tools.go
"${hak[@]}" tools --shapes py > guest-sdk/python/hak_guest/tools.py
"${hak[@]}" tools --shapes json > docs/tool-shapes.json
