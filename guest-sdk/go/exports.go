package guest

import (
	"fmt"
	"unsafe"
)

// The component's exports, lifted and lowered by hand (layouts in abi.go's comments):
//   describe            -> result<plugin-info, string>      44 bytes
//   hooks.*             -> result<hook-result, string>      16 bytes
//   policy.*            -> result<verdict, string>          40 bytes
//   events.on-tool-failure(string)

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

//go:wasmexport hedera:agent-kit/plugin@0.1.2#describe
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

func input(stage, mp, mn, toolType uint32, pp unsafe.Pointer, pn uint32) *StageInput {
	return &StageInput{
		Stage:      Stage(stage),
		Method:     liftString(unsafe.Pointer(uintptr(mp)), mn),
		ToolType:   ToolType(toolType),
		ParamsJSON: liftString(pp, pn),
	}
}

func runHook(stage, mp, mn, toolType uint32, pp unsafe.Pointer, pn uint32) (ret uint32) {
	begin()
	defer endCall()
	if overflowed {
		return errResult(overflowMessage)
	}
	in := input(stage, mp, mn, toolType, pp, pn)
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

func runPolicy(stage, mp, mn, toolType uint32, pp unsafe.Pointer, pn uint32) (ret uint32) {
	begin()
	defer endCall()
	if overflowed {
		return errResult(overflowMessage)
	}
	in := input(stage, mp, mn, toolType, pp, pn)
	p, ok := registered.(Policy)
	b, at := retAreaFor()
	if !ok {
		return at // ok(allow)
	}
	defer func() {
		if r := recover(); r != nil {
			ret = errResult(panicMessage(r))
		}
	}()
	v, err := p.ShouldBlock(in)
	if err != nil {
		return errResult(err.Error())
	}
	if v.Blocked {
		b[4] = 1
		putString(b, 8, v.Message)
		putOptionString(b, 16, v.Code)
		putOptionString(b, 28, v.DetailsJSON)
	}
	return at
}

//go:wasmexport hedera:agent-kit/hooks@0.1.2#pre-tool-execution
func exportHookPre(stage, mp, mn, tt uint32, pp unsafe.Pointer, pn uint32) uint32 {
	return runHook(stage, mp, mn, tt, pp, pn)
}

//go:wasmexport hedera:agent-kit/hooks@0.1.2#post-params-normalization
func exportHookParams(stage, mp, mn, tt uint32, pp unsafe.Pointer, pn uint32) uint32 {
	return runHook(stage, mp, mn, tt, pp, pn)
}

//go:wasmexport hedera:agent-kit/hooks@0.1.2#post-core-action
func exportHookCore(stage, mp, mn, tt uint32, pp unsafe.Pointer, pn uint32) uint32 {
	return runHook(stage, mp, mn, tt, pp, pn)
}

//go:wasmexport hedera:agent-kit/hooks@0.1.2#post-tool-execution
func exportHookTool(stage, mp, mn, tt uint32, pp unsafe.Pointer, pn uint32) uint32 {
	return runHook(stage, mp, mn, tt, pp, pn)
}

//go:wasmexport hedera:agent-kit/policy@0.1.2#should-block-pre-tool-execution
func exportPolicyPre(stage, mp, mn, tt uint32, pp unsafe.Pointer, pn uint32) uint32 {
	return runPolicy(stage, mp, mn, tt, pp, pn)
}

//go:wasmexport hedera:agent-kit/policy@0.1.2#should-block-post-params-normalization
func exportPolicyParams(stage, mp, mn, tt uint32, pp unsafe.Pointer, pn uint32) uint32 {
	return runPolicy(stage, mp, mn, tt, pp, pn)
}

//go:wasmexport hedera:agent-kit/policy@0.1.2#should-block-post-core-action
func exportPolicyCore(stage, mp, mn, tt uint32, pp unsafe.Pointer, pn uint32) uint32 {
	return runPolicy(stage, mp, mn, tt, pp, pn)
}

//go:wasmexport hedera:agent-kit/policy@0.1.2#should-block-post-secondary-action
func exportPolicySecondary(stage, mp, mn, tt uint32, pp unsafe.Pointer, pn uint32) uint32 {
	return runPolicy(stage, mp, mn, tt, pp, pn)
}

//go:wasmexport hedera:agent-kit/events@0.1.2#on-tool-failure
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
