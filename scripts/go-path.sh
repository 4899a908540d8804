#!/usr/bin/env bash
# Print the Go binary hak's scripts use (installed by scripts/install-deps.sh).
cd "$(dirname "$0")/.."
ls "$PWD"/target/tools/go-venv/lib/python3*/site-packages/go/bin/go 2>/dev/null | head -1
