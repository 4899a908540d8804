//go:build wasip1

package guest

import (
	"errors"
	"unsafe"
)

// The `rates` import (contract 0.2.2), lowered by hand. current -> result<exchange-rate,
// string> comes back through a return area: tag u8 at 0; ok: hbar-equivalent u32 at 8,
// cent-equivalent u32 at 12, expiration-seconds u64 at 16; err: string ptr/len at 8/12.

//go:wasmimport hedera:agent-kit/rates@0.2.2 current
func importRatesCurrent(ret unsafe.Pointer)

// CurrentExchangeRate is the network's HBAR exchange rate in force (capability `rates`), as
// its mirror node states it and the host keeps it. On error (not granted, no rate) a policy
// counting in dollars must block.
func CurrentExchangeRate() (ExchangeRate, error) {
	var ret [3]uint64 // 24 bytes, 8-aligned
	r := unsafe.Pointer(&ret[0])
	importRatesCurrent(r)
	if *(*byte)(r) == 0 {
		return ExchangeRate{
			HbarEquivalent:    getU32(r, 8),
			CentEquivalent:    getU32(r, 12),
			ExpirationSeconds: getU64(r, 16),
		}, nil
	}
	return ExchangeRate{}, errors.New(liftString(unsafe.Pointer(uintptr(getU32(r, 8))), getU32(r, 12)))
}
