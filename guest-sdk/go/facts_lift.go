//go:build wasip1

package guest

import (
	"math/big"
	"unsafe"
)

// Canonical ABI layouts (all little-endian):
//
//	facts (52 bytes, align 4): movements list @0, source option<string> @8, tokens
//	  list<string> @20, changes list<entity> @28, memo option<string> @36, scheduled @48
//	movement (40 bytes, align 8): asset variant @0 (tag u8, string @4), to option<string> @12,
//	  amount u64 @24, via enum @32
//	entity (16 bytes): kind string @0, id string @8
var assetKinds = [3]string{Hbar, Token, NFT}

func stringAt(p unsafe.Pointer, at uintptr) string {
	return liftString(unsafe.Pointer(uintptr(getU32(p, at))), getU32(p, at+4))
}

func optionStringAt(p unsafe.Pointer, at uintptr) (string, bool) {
	if getU8(p, at) == 0 {
		return "", false
	}
	return stringAt(p, at+4), true
}

func liftFacts(p unsafe.Pointer) *Facts {
	f := &Facts{}
	base, n := unsafe.Pointer(uintptr(getU32(p, 0))), getU32(p, 4)
	f.Movements = make([]Movement, n)
	for i := uint32(0); i < n; i++ {
		m := unsafe.Add(base, uintptr(i)*40)
		tag := getU8(m, 0)
		mv := Movement{Amount: new(big.Int).SetUint64(getU64(m, 24)), Allowance: getU8(m, 32) == 1}
		if int(tag) < len(assetKinds) {
			mv.Kind = assetKinds[tag]
		}
		if tag != 0 {
			mv.ID = stringAt(m, 4)
		}
		mv.To, _ = optionStringAt(m, 12)
		f.Movements[i] = mv
	}
	f.Source, _ = optionStringAt(p, 8)
	base, n = unsafe.Pointer(uintptr(getU32(p, 20))), getU32(p, 24)
	f.Tokens = make([]string, n)
	for i := uint32(0); i < n; i++ {
		f.Tokens[i] = stringAt(base, uintptr(i)*8)
	}
	base, n = unsafe.Pointer(uintptr(getU32(p, 28))), getU32(p, 32)
	f.Changes = make([]Entity, n)
	for i := uint32(0); i < n; i++ {
		e := unsafe.Add(base, uintptr(i)*16)
		f.Changes[i] = Entity{Kind: stringAt(e, 0), ID: stringAt(e, 8)}
	}
	if memo, ok := optionStringAt(p, 36); ok {
		f.Memo = &memo
	}
	f.Scheduled = getU8(p, 48) != 0
	return f
}
