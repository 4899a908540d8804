-- wrk script for `hak serve` throughput: POST one return-bytes transfer per request.
--   wrk -t2 -c64 -d10s -s scripts/wrk-transfer.lua http://127.0.0.1:8787/v1/tools/transfer_hbar_tool
-- (A blocked or failed call also answers 200, with an error envelope: check one call's body
-- with curl before measuring.)
wrk.method = "POST"
wrk.body = '{"transfers":[{"accountId":"0.0.2001","amount":1},{"accountId":"0.0.2002","amount":0.5}],"transactionMemo":"bench"}'
wrk.headers["Content-Type"] = "application/json"
