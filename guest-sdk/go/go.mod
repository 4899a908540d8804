module hak.local/guest

go 1.27
