//go:build wasip1

package guest

import (
	"errors"
	"runtime"
	"unsafe"
)

// The `host` and `hedera` imports, lowered by hand (see abi.go for the layouts).

//go:wasmimport hedera:agent-kit/host@0.2.2 log
func importLog(level uint32, ptr unsafe.Pointer, n uint32)

//go:wasmimport hedera:agent-kit/host@0.2.2 state-get
func importStateGet(ptr unsafe.Pointer, n uint32, ret unsafe.Pointer)

//go:wasmimport hedera:agent-kit/host@0.2.2 state-set
func importStateSet(kp unsafe.Pointer, kn uint32, vp unsafe.Pointer, vn uint32, ret unsafe.Pointer)

//go:wasmimport hedera:agent-kit/host@0.2.2 state-delete
func importStateDelete(ptr unsafe.Pointer, n uint32)

//go:wasmimport hedera:agent-kit/host@0.2.2 now-unix-ms
func importNowUnixMs() int64

//go:wasmimport hedera:agent-kit/hedera@0.2.2 submit-topic-message
func importSubmitTopicMessage(tp unsafe.Pointer, tn uint32, mp unsafe.Pointer, mn uint32, ret unsafe.Pointer)

//go:wasmimport hedera:agent-kit/hedera@0.2.2 create-topic
func importCreateTopic(mp unsafe.Pointer, mn uint32, ret unsafe.Pointer)

func strPtr(s string) (unsafe.Pointer, uint32) {
	if len(s) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(unsafe.StringData(s)), uint32(len(s))
}

// Log writes to the host log, tagged with the plugin's name.
func Log(level uint32, message string) {
	p, n := strPtr(message)
	importLog(level, p, n)
	runtime.KeepAlive(message)
}

// StateGet reads this plugin's per-context scratchpad.
func StateGet(key string) (string, bool) {
	var ret [12]byte
	p, n := strPtr(key)
	importStateGet(p, n, unsafe.Pointer(&ret[0]))
	runtime.KeepAlive(key)
	if ret[0] == 0 {
		return "", false
	}
	r := unsafe.Pointer(&ret[0])
	return liftString(unsafe.Pointer(uintptr(getU32(r, 4))), getU32(r, 8)), true
}

// StateSet writes the scratchpad; an error when the plugin's byte cap would be exceeded.
func StateSet(key, value string) error {
	var ret [12]byte
	kp, kn := strPtr(key)
	vp, vn := strPtr(value)
	importStateSet(kp, kn, vp, vn, unsafe.Pointer(&ret[0]))
	runtime.KeepAlive(key)
	runtime.KeepAlive(value)
	return resultErr(ret[:])
}

// StateDelete removes a key from the scratchpad.
func StateDelete(key string) {
	p, n := strPtr(key)
	importStateDelete(p, n)
	runtime.KeepAlive(key)
}

// NowUnixMs is the host's wall clock.
func NowUnixMs() int64 { return importNowUnixMs() }

// SubmitTopicMessage needs the capability hedera:submit-topic-message.
func SubmitTopicMessage(topicID, message string) (string, error) {
	var ret [12]byte
	tp, tn := strPtr(topicID)
	mp, mn := strPtr(message)
	importSubmitTopicMessage(tp, tn, mp, mn, unsafe.Pointer(&ret[0]))
	runtime.KeepAlive(topicID)
	runtime.KeepAlive(message)
	return resultString(ret[:])
}

// CreateTopic needs the capability hedera:create-topic.
func CreateTopic(memo string) (string, error) {
	var ret [12]byte
	mp, mn := strPtr(memo)
	importCreateTopic(mp, mn, unsafe.Pointer(&ret[0]))
	runtime.KeepAlive(memo)
	return resultString(ret[:])
}

func resultErr(ret []byte) error {
	if ret[0] == 0 {
		return nil
	}
	r := unsafe.Pointer(&ret[0])
	return errors.New(liftString(unsafe.Pointer(uintptr(getU32(r, 4))), getU32(r, 8)))
}

func resultString(ret []byte) (string, error) {
	r := unsafe.Pointer(&ret[0])
	s := liftString(unsafe.Pointer(uintptr(getU32(r, 4))), getU32(r, 8))
	if ret[0] == 0 {
		return s, nil
	}
	return "", errors.New(s)
}
