//go:build !wasip1

package guest

// A native build (`go test` in a plugin's directory) has no host: the host imports are backed
// by in-memory fakes here, shared by the process and guarded by a lock, so a plugin's
// unit tests run with the standard toolchain. Reset them with FakeReset between tests; a
// component (GOOS=wasip1) never compiles this file and calls the real host.

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// FakeLog is one line a plugin logged in a native build.
type FakeLog struct {
	Level   uint32
	Message string
}

// FakeTopicMessage is one message a plugin submitted in a native build.
type FakeTopicMessage struct{ TopicID, Message string }

var fake = struct {
	sync.Mutex
	state    map[string]string
	nowMs    int64
	spent    map[string]uint64
	logs     []FakeLog
	messages []FakeTopicMessage
	rate     *ExchangeRate
}{state: map[string]string{}, spent: map[string]uint64{}}

// FakeReset forgets the fake scratchpad, clock, budgets, log and topic messages.
func FakeReset() {
	fake.Lock()
	defer fake.Unlock()
	fake.state = map[string]string{}
	fake.nowMs = 0
	fake.spent = map[string]uint64{}
	fake.logs = nil
	fake.messages = nil
	fake.rate = nil
}

// FakeSetExchangeRate sets what CurrentExchangeRate answers (nil: an error, as for a plugin
// not granted `rates`).
func FakeSetExchangeRate(rate *ExchangeRate) {
	fake.Lock()
	defer fake.Unlock()
	fake.rate = rate
}

// CurrentExchangeRate is the fake rate (see the wasm build's doc).
func CurrentExchangeRate() (ExchangeRate, error) {
	fake.Lock()
	defer fake.Unlock()
	if fake.rate == nil {
		return ExchangeRate{}, errors.New("capability rates is not granted (FakeSetExchangeRate)")
	}
	return *fake.rate, nil
}

// FakeSetNowUnixMs fixes what NowUnixMs answers (0: the real clock).
func FakeSetNowUnixMs(ms int64) {
	fake.Lock()
	defer fake.Unlock()
	fake.nowMs = ms
}

// FakeLogs is what the plugin logged, in order.
func FakeLogs() []FakeLog {
	fake.Lock()
	defer fake.Unlock()
	return append([]FakeLog(nil), fake.logs...)
}

// FakeState is the scratchpad as the plugin left it.
func FakeState() map[string]string {
	fake.Lock()
	defer fake.Unlock()
	out := make(map[string]string, len(fake.state))
	for k, v := range fake.state {
		out[k] = v
	}
	return out
}

// FakeSpent is what is reserved under key (every reservation counts, as if each call's
// transaction applied; windows are not modelled).
func FakeSpent(key string) uint64 {
	fake.Lock()
	defer fake.Unlock()
	return fake.spent[key]
}

// FakeTopicMessages is what the plugin submitted, in order.
func FakeTopicMessages() []FakeTopicMessage {
	fake.Lock()
	defer fake.Unlock()
	return append([]FakeTopicMessage(nil), fake.messages...)
}

// Log writes to the host log (here: FakeLogs).
func Log(level uint32, message string) {
	fake.Lock()
	defer fake.Unlock()
	fake.logs = append(fake.logs, FakeLog{level, message})
}

// StateGet reads this plugin's per-context scratchpad.
func StateGet(key string) (string, bool) {
	fake.Lock()
	defer fake.Unlock()
	v, ok := fake.state[key]
	return v, ok
}

// StateSet writes the scratchpad.
func StateSet(key, value string) error {
	fake.Lock()
	defer fake.Unlock()
	fake.state[key] = value
	return nil
}

// StateDelete removes a key from the scratchpad.
func StateDelete(key string) {
	fake.Lock()
	defer fake.Unlock()
	delete(fake.state, key)
}

// NowUnixMs is the host's wall clock (here: FakeSetNowUnixMs, or the real clock).
func NowUnixMs() int64 {
	fake.Lock()
	defer fake.Unlock()
	if fake.nowMs != 0 {
		return fake.nowMs
	}
	return time.Now().UnixMilli()
}

// SubmitTopicMessage records the message (FakeTopicMessages) and answers a transaction ID.
func SubmitTopicMessage(topicID, message string) (string, error) {
	if !IsEntityID(topicID) {
		return "", fmt.Errorf("invalid topic id %q", topicID)
	}
	fake.Lock()
	defer fake.Unlock()
	fake.messages = append(fake.messages, FakeTopicMessage{topicID, message})
	return fmt.Sprintf("0.0.2@1700000000.%09d", len(fake.messages)), nil
}

// CreateTopic has no network to create a topic on in a native build.
func CreateTopic(memo string) (string, error) {
	return "", errors.New("create-topic: no network in a native test")
}

// Reserve reserves amount under key against limit, atomically (see the wasm build's doc).
func Reserve(key string, amount, limit uint64, windowSeconds uint32) (uint64, error) {
	fake.Lock()
	defer fake.Unlock()
	spent := fake.spent[key]
	if amount > limit || spent > limit-amount {
		return 0, OverLimit{Spent: spent}
	}
	fake.spent[key] = spent + amount
	return spent + amount, nil
}

// Spent is what is reserved under key.
func Spent(key string, windowSeconds uint32) (uint64, error) {
	fake.Lock()
	defer fake.Unlock()
	return fake.spent[key], nil
}
