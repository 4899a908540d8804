#!/usr/bin/env bash
# Set up everything and run hak's main job on the embedded default (no keys, no network):
# a return-bytes transfer_hbar_tool call, then the same through the example policies
# (one call allowed, one blocked by Max Recipients).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build-plugins.sh
cargo build --quiet -p hak-host --bin hak
hak=target/debug/hak

echo "== transfer_hbar_tool, embedded default (testnet address book, return-bytes for 0.0.1001)"
$hak call transfer_hbar_tool '{"transfers":[{"accountId":"0.0.1002","amount":1.5}],"transactionMemo":"hello from hak"}'

echo "== through the example policies (examples/hak.toml): allowed"
$hak call transfer_hbar_tool '{"transfers":[{"accountId":"0.0.1002","amount":1},{"accountId":"0.0.1003","amount":2}]}' --config examples/hak.toml

echo "== through the example policies: blocked (3 recipients > maxRecipients 2)"
$hak call transfer_hbar_tool '{"transfers":[{"accountId":"0.0.1002","amount":1},{"accountId":"0.0.1003","amount":1},{"accountId":"0.0.1004","amount":1}]}' --config examples/hak.toml

echo "== cost of a call through the chain (debug build; see docs/BENCHMARKS.md for release figures)"
$hak bench transfer_hbar_tool '{"transfers":[{"accountId":"0.0.1002","amount":1}]}' --config examples/hak.toml --calls 500
