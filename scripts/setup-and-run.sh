#!/usr/bin/env bash
# Set up everything and run hak's main job on the embedded default (no keys, no network):
# the local Hedera network inside hak, autonomous mode, through the example policies:
# an allowed transfer, a blocked one, and a balance query that sees the first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build-plugins.sh rust
cargo build --quiet -p hak-host --bin hak
hak=target/debug/hak
rm -rf target/hak-local   # start the local ledger from genesis

echo "== 1. transfer 2.5 HBAR to 0.0.1002: allowed by the policies, executed on the local network"
$hak call transfer_hbar_tool '{"transfers":[{"accountId":"0.0.1002","amount":2.5}],"transactionMemo":"hello from hak"}' --config examples/local.toml

echo "== 2. transfer to three recipients: blocked by Max Recipients (max 2), nothing submitted"
$hak call transfer_hbar_tool '{"transfers":[{"accountId":"0.0.1002","amount":1},{"accountId":"0.0.1003","amount":1},{"accountId":"0.0.1004","amount":1}]}' --config examples/local.toml

echo "== 3. query 0.0.1002's balance through the mirror API: 1000 + 2.5 HBAR"
$hak call get_hbar_balance_query_tool '{"accountId":"0.0.1002"}' --config examples/local.toml

echo "== 4. the same transfer in return-bytes mode: unsigned bytes for a wallet, nothing submitted"
$hak call transfer_hbar_tool '{"transfers":[{"accountId":"0.0.1002","amount":1}]}' --config examples/local.toml --mode return-bytes
