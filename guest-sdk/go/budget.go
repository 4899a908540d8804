//go:build wasip1

package guest

import (
	"errors"
	"runtime"
	"unsafe"
)

// The `budget` import (contract 0.1.2, bound under 0.2.2), lowered by hand. Its results come back through a
// return area laid out by the canonical ABI:
//   reserve -> result<u64, reserve-error>: tag u8 at 0; ok u64 at 8; err: the variant's tag
//   u8 at 8 (0 over-limit, 1 unavailable) and its payload at 16 (u64, or string ptr/len).
//   spent -> result<u64, string>: tag u8 at 0; ok u64 at 8; err string ptr/len at 8/12.

//go:wasmimport hedera:agent-kit/budget@0.2.2 reserve
func importReserve(kp unsafe.Pointer, kn uint32, amount uint64, limit uint64, window uint32, ret unsafe.Pointer)

//go:wasmimport hedera:agent-kit/budget@0.2.2 spent
func importSpent(kp unsafe.Pointer, kn uint32, window uint32, ret unsafe.Pointer)

// Reserve reserves amount under key against limit within a rolling window of windowSeconds,
// atomically with every other call of this plugin in this agent context. It returns the
// window's total including this reservation; an OverLimit error when it would pass the limit;
// an error wrapping ErrBudgetUnavailable when the store cannot answer. The host commits the
// reservation when the call's transaction applied or may have, and releases it otherwise.
func Reserve(key string, amount, limit uint64, windowSeconds uint32) (uint64, error) {
	var ret [3]uint64 // 24 bytes, 8-aligned
	r := unsafe.Pointer(&ret[0])
	kp, kn := strPtr(key)
	importReserve(kp, kn, amount, limit, windowSeconds, r)
	runtime.KeepAlive(key)
	if *(*byte)(r) == 0 {
		return getU64(r, 8), nil
	}
	if *(*byte)(unsafe.Add(r, 8)) == 0 {
		return 0, OverLimit{Spent: getU64(r, 16)}
	}
	reason := liftString(unsafe.Pointer(uintptr(getU32(r, 16))), getU32(r, 20))
	return 0, errors.Join(ErrBudgetUnavailable, errors.New(reason))
}

// Spent is what is spent or reserved under key in the last windowSeconds.
func Spent(key string, windowSeconds uint32) (uint64, error) {
	var ret [2]uint64
	r := unsafe.Pointer(&ret[0])
	kp, kn := strPtr(key)
	importSpent(kp, kn, windowSeconds, r)
	runtime.KeepAlive(key)
	if *(*byte)(r) == 0 {
		return getU64(r, 8), nil
	}
	return 0, errors.New(liftString(unsafe.Pointer(uintptr(getU32(r, 8))), getU32(r, 12)))
}
