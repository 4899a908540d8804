//go:build wasip1

package guest

import (
	"fmt"
	"unsafe"
)

// The component's exports, lifted and lowered by hand (layouts in abi.go's comments):
//   describe            -> result<plugin-info, string>      44 bytes
//   hooks.*(stage-input)  -> result<hook-result, string>    16 bytes
//   policy.*(stage-input) -> result<verdict, string>        44 bytes
//   events.on-tool-failure(string)
//   inputs.reads()        -> list<tool-reads>                8 bytes (entries: tool @0, flags u8 @8, 12 bytes)
// A stage input flattens to more than 16 values (contract 0.2.0 added `facts`), so the host
// passes it in memory, by one pointer (80 bytes, align 4): stage u8 @0, method @4, tool-type
// u8 @12, params @16, facts option @24 (tag u8, facts @28; facts.go has their layout).

const overflowMessage = "input larger than the Go SDK's arena (8 MiB)"

func begin() {
	retained = retained[:0]
}

func errResult(msg string) uint32 {
	b, at := retAreaFor()
	b[0] = 1
	putString(b, 4, msg)
	return at
}

func panicMessage(r any) string { return fmt.Sprintf("plugin panicked: %v", r) }

//go:wasmexport hedera:agent-kit/plugin@0.2.2#describe
func exportDescribe(ptr unsafe.Pointer, n uint32) (ret uint32) {
	begin()
	defer endCall()
	if overflowed {
		return errResult(overflowMessage)
	}
	config := []byte(liftString(ptr, n))
	if registered == nil {
		return errResult("no plugin registered (call guest.Register in an init function)")
	}
	defer func() {
		if r := recover(); r != nil {
			ret = errResult(panicMessage(r))
		}
	}()
	info, err := registered.Describe(config)
	if err != nil {
		return errResult(err.Error())
	}
	b, at := retAreaFor()
	putString(b, 4, info.Name)
	putString(b, 12, info.Description)
	tools := make([]byte, 8*len(info.RelevantTools))
	for i, t := range info.RelevantTools {
		putString(tools, 8*i, t)
	}
	putU32(b, 20, lowerBytes(tools))
	putU32(b, 24, uint32(len(info.RelevantTools)))
	for i, stages := range [][]Stage{info.HookStages, info.PolicyStages} {
		list := make([]byte, len(stages))
		for j, s := range stages {
			list[j] = byte(s)
		}
		putU32(b, 28+8*i, lowerBytes(list))
		putU32(b, 32+8*i, uint32(len(stages)))
	}
	return at
}

func input(p unsafe.Pointer) *StageInput {
	in := &StageInput{
		Stage:      Stage(getU8(p, 0)),
		Method:     stringAt(p, 4),
		ToolType:   ToolType(getU8(p, 12)),
		ParamsJSON: stringAt(p, 16),
	}
	if getU8(p, 24) != 0 {
		in.Facts = liftFacts(unsafe.Add(p, 28))
	}
	return in
}

func runHook(p unsafe.Pointer) (ret uint32) {
	begin()
	defer endCall()
	if overflowed {
		return errResult(overflowMessage)
	}
	in := input(p)
	h, ok := registered.(Hooks)
	b, at := retAreaFor()
	if !ok {
		return at // ok(proceed)
	}
	defer func() {
		if r := recover(); r != nil {
			ret = errResult(panicMessage(r))
		}
	}()
	res, err := h.Hook(in)
	if err != nil {
		return errResult(err.Error())
	}
	if res.Replace != nil {
		b[4] = 1
		putString(b, 8, *res.Replace)
	}
	return at
}

func runPolicy(p unsafe.Pointer) (ret uint32) {
	begin()
	defer endCall()
	if overflowed {
		return errResult(overflowMessage)
	}
	in := input(p)
	policy, ok := registered.(Policy)
	b, at := retAreaFor()
	if !ok {
		return at // ok(allow)
	}
	defer func() {
		if r := recover(); r != nil {
			ret = errResult(panicMessage(r))
		}
	}()
	v, err := policy.ShouldBlock(in)
	if err != nil {
		return errResult(err.Error())
	}
	// verdict @4: tag (0 allow, 1 block, 2 needs-approval), then message @8, code @16,
	// details-json @28 and (needs-approval) timeout-seconds u32 @40.
	switch {
	case v.NeedsApproval:
		b[4] = 2
		putU32(b, 40, v.TimeoutSeconds)
	case v.Blocked:
		b[4] = 1
	default:
		return at
	}
	putString(b, 8, v.Message)
	putOptionString(b, 16, v.Code)
	putOptionString(b, 28, v.DetailsJSON)
	return at
}

//go:wasmexport hedera:agent-kit/hooks@0.2.2#pre-tool-execution
func exportHookPre(p unsafe.Pointer) uint32 {
	return runHook(p)
}

//go:wasmexport hedera:agent-kit/hooks@0.2.2#post-params-normalization
func exportHookParams(p unsafe.Pointer) uint32 {
	return runHook(p)
}

//go:wasmexport hedera:agent-kit/hooks@0.2.2#post-core-action
func exportHookCore(p unsafe.Pointer) uint32 {
	return runHook(p)
}

//go:wasmexport hedera:agent-kit/hooks@0.2.2#post-tool-execution
func exportHookTool(p unsafe.Pointer) uint32 {
	return runHook(p)
}

//go:wasmexport hedera:agent-kit/policy@0.2.2#should-block-pre-tool-execution
func exportPolicyPre(p unsafe.Pointer) uint32 {
	return runPolicy(p)
}

//go:wasmexport hedera:agent-kit/policy@0.2.2#should-block-post-params-normalization
func exportPolicyParams(p unsafe.Pointer) uint32 {
	return runPolicy(p)
}

//go:wasmexport hedera:agent-kit/policy@0.2.2#should-block-post-core-action
func exportPolicyCore(p unsafe.Pointer) uint32 {
	return runPolicy(p)
}

//go:wasmexport hedera:agent-kit/policy@0.2.2#should-block-post-secondary-action
func exportPolicySecondary(p unsafe.Pointer) uint32 {
	return runPolicy(p)
}

//go:wasmexport hedera:agent-kit/events@0.2.2#on-tool-failure
func exportOnToolFailure(ptr unsafe.Pointer, n uint32) {
	begin()
	defer endCall()
	if overflowed {
		return
	}
	report := liftString(ptr, n)
	if o, ok := registered.(FailureObserver); ok {
		defer func() { _ = recover() }()
		o.OnToolFailure(report)
	}
}

//go:wasmexport hedera:agent-kit/inputs@0.2.2#reads
func exportReads() (ret uint32) {
	begin()
	defer endCall()
	table := []ToolReads{{Tool: "*", Params: true, Facts: true}}
	if r, ok := registered.(Reader); ok && !overflowed {
		func() {
			defer func() { _ = recover() }()
			table = r.Reads()
		}()
	}
	list := make([]byte, 12*len(table))
	for i, e := range table {
		putString(list, 12*i, e.Tool)
		var flags byte
		if e.Params {
			flags |= 1
		}
		if e.Facts {
			flags |= 2
		}
		list[12*i+8] = flags
	}
	b, at := retAreaFor()
	putU32(b, 0, lowerBytes(list))
	putU32(b, 4, uint32(len(table)))
	return at
}
