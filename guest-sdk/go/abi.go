//go:build wasip1

// Package guest is hak's guest SDK for Go (standard Go 1.27, GOOS=wasip1): write a hook or a
// policy as a Go type, Register it, and build with `go build -buildmode=c-shared`; hak turns
// the core module into a component of hedera:agent-kit/agent-plugin@0.2.2
// (`hak plugin componentize`). This file is the canonical ABI: memory the host writes inputs
// into, and the layouts of strings, lists, options, variants and results.
//
// cabi_realloc never touches the Go heap (the adapter calls it before the Go runtime exists,
// and a GC inside it would leave the component instance): it bump-allocates from an arena
// reset after every export call. An input that does not fit the arena sets `overflowed`, and
// the export answers with a defined error instead of trapping.
package guest

import "unsafe"

const (
	arenaSize   = 8 << 20   // inputs of one call
	adapterSize = 256 << 10 // the WASI adapter's allocations, never reset
)

var (
	arena        [arenaSize]byte
	arenaUsed    uintptr
	overflowed   bool
	adapterArena [adapterSize]byte
	adapterUsed  uintptr
	// Values handed to the host in a return area; kept alive until the next call.
	retained [][]byte
	retArea  [64]byte
)

func align(n, a uintptr) uintptr { return (n + a - 1) &^ (a - 1) }

func bump(buf []byte, used *uintptr, size, alignment uintptr) (unsafe.Pointer, bool) {
	if alignment == 0 {
		alignment = 1
	}
	base := uintptr(unsafe.Pointer(&buf[0]))
	start := align(base+*used, alignment) - base
	if start+size > uintptr(len(buf)) {
		return nil, false
	}
	*used = start + size
	return unsafe.Pointer(&buf[start]), true
}

//go:wasmexport cabi_realloc
func cabiRealloc(oldPtr unsafe.Pointer, oldSize, alignment, newSize uint32) unsafe.Pointer {
	p, ok := bump(arena[:], &arenaUsed, uintptr(newSize), uintptr(alignment))
	if !ok {
		// Too large for this call: remember it, and hand out the arena's start (the export
		// will not read the input and answers with an error).
		overflowed = true
		if uintptr(newSize) <= arenaSize {
			return unsafe.Pointer(&arena[0])
		}
		return unsafe.Pointer(&adapterArena[0])
	}
	if oldPtr != nil && oldSize > 0 {
		copy(unsafe.Slice((*byte)(p), newSize), unsafe.Slice((*byte)(oldPtr), oldSize))
	}
	return p
}

//go:wasmexport cabi_realloc_adapter
func cabiReallocAdapter(oldPtr unsafe.Pointer, oldSize, alignment, newSize uint32) unsafe.Pointer {
	p, ok := bump(adapterArena[:], &adapterUsed, uintptr(newSize), uintptr(alignment))
	if !ok {
		return nil
	}
	if oldPtr != nil && oldSize > 0 {
		copy(unsafe.Slice((*byte)(p), newSize), unsafe.Slice((*byte)(oldPtr), oldSize))
	}
	return p
}

// endCall forgets this call's inputs (they were copied into Go values).
func endCall() {
	arenaUsed = 0
	overflowed = false
}

// liftString copies a (ptr, len) string out of linear memory into a Go string.
func liftString(ptr unsafe.Pointer, n uint32) string {
	if n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(ptr), n))
}

// lower keeps a copy of s alive until the next call and returns its (ptr, len).
func lower(s string) (uint32, uint32) {
	if len(s) == 0 {
		return 0, 0
	}
	b := []byte(s)
	retained = append(retained, b)
	return uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))
}

// lowerBytes keeps b alive until the next call and returns its address.
func lowerBytes(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	retained = append(retained, b)
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}

func putU32(b []byte, at int, v uint32) {
	b[at] = byte(v)
	b[at+1] = byte(v >> 8)
	b[at+2] = byte(v >> 16)
	b[at+3] = byte(v >> 24)
}

func getU32(p unsafe.Pointer, at uintptr) uint32 {
	b := unsafe.Slice((*byte)(unsafe.Add(p, at)), 4)
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func getU8(p unsafe.Pointer, at uintptr) uint8 {
	return *(*uint8)(unsafe.Add(p, at))
}

func getU64(p unsafe.Pointer, at uintptr) uint64 {
	return uint64(getU32(p, at)) | uint64(getU32(p, at+4))<<32
}

// retAreaFor zeroes the static return area and returns it with its address.
func retAreaFor() ([]byte, uint32) {
	for i := range retArea {
		retArea[i] = 0
	}
	return retArea[:], uint32(uintptr(unsafe.Pointer(&retArea[0])))
}

// putString writes a lowered string's (ptr, len) at `at`.
func putString(b []byte, at int, s string) {
	p, n := lower(s)
	putU32(b, at, p)
	putU32(b, at+4, n)
}

// putOptionString writes option<string> (12 bytes: tag, pad, ptr, len) at `at`.
func putOptionString(b []byte, at int, s *string) {
	if s == nil {
		b[at] = 0
		return
	}
	b[at] = 1
	putString(b, at+4, *s)
}
