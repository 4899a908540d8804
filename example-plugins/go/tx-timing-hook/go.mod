module hak.local/plugins/tx-timing-hook

go 1.27

require hak.local/guest v0.0.0

replace hak.local/guest => ../../../guest-sdk/go
