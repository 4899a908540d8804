// "tx-timing-hook" in Go: the twin of example-plugins/rust/tx-timing-hook. The monotonic
// clock (time.Now carries it) at pre-tool-execution; the call's duration in microseconds
// logged at post-tool-execution, tagged [tx-timing-hook]. The start lives in the instance,
// which serves one call at a time from its first stage to its last, so concurrent calls of
// one context never overwrite each other's start.
// Config: {"relevantTools": ["transfer_hbar_tool"]} (default: every tool).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	guest "hak.local/guest"
)

type hook struct {
	started time.Time
	running bool
}

func (h *hook) Describe(config []byte) (guest.Info, error) {
	var c struct {
		RelevantTools *[]string `json:"relevantTools"`
	}
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return guest.Info{}, fmt.Errorf("invalid config: %v", err)
	}
	tools := []string{"*"}
	if c.RelevantTools != nil {
		if len(*c.RelevantTools) == 0 {
			return guest.Info{}, errors.New("invalid config: relevantTools: list at least one tool")
		}
		tools = *c.RelevantTools
	}
	return guest.Info{
		Name:          "tx-timing-hook",
		Description:   "Measures each tool call's duration and logs it",
		RelevantTools: tools,
		HookStages:    []guest.Stage{guest.PreToolExecution, guest.PostSecondaryAction},
	}, nil
}

// Reads: nothing of the params or facts (the method name always comes).
func (h *hook) Reads() []guest.ToolReads {
	return []guest.ToolReads{{Tool: "*"}}
}

func (h *hook) Hook(in *guest.StageInput) (guest.HookResult, error) {
	switch in.Stage {
	case guest.PreToolExecution:
		h.started, h.running = time.Now(), true
	case guest.PostSecondaryAction:
		if h.running {
			h.running = false
			micros := time.Since(h.started).Microseconds()
			guest.Log(guest.LevelInfo, fmt.Sprintf("[tx-timing-hook] %s took %d µs", in.Method, micros))
		}
	}
	return guest.Proceed, nil
}

func init() { guest.Register(&hook{}) }

func main() {}
