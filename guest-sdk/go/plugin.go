package guest

import (
	"encoding/json"
	"strings"
)

// Stage is one of the four hookable stages (canonical ABI enum order).
type Stage uint8

const (
	PreToolExecution Stage = iota
	PostParamsNormalization
	PostCoreAction
	PostSecondaryAction
)

// ToolType is the kit's TOOL_TYPE.
type ToolType uint8

const (
	Query ToolType = iota
	Transaction
	Other
)

// Info is what Describe returns: the plugin's name, tools and stages.
type Info struct {
	Name          string
	Description   string
	RelevantTools []string
	HookStages    []Stage
	PolicyStages  []Stage
}

// Log levels of the `host.log` import.
const (
	LevelTrace uint32 = iota
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
)

// StageInput is one stage call's input; Params parses the JSON once. Facts are what the host
// states the call does (nil at pre-tool-execution).
type StageInput struct {
	Stage      Stage
	Method     string
	ToolType   ToolType
	ParamsJSON string
	Facts      *Facts
	parsed     map[string]any
}

// Params is the stage's params object (`context`, `rawParams`, `normalisedParams`, …), with
// numbers as json.Number so 64-bit amounts keep their precision.
func (in *StageInput) Params() (map[string]any, error) {
	if in.parsed == nil {
		dec := json.NewDecoder(strings.NewReader(in.ParamsJSON))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		in.parsed = m
	}
	return in.parsed, nil
}

// Verdict is a policy's answer: Allow, Block(...) or NeedsApproval(...).
type Verdict struct {
	Blocked     bool
	Message     string
	Code        *string
	DetailsJSON *string
	// NeedsApproval parks the call until a human decides (contract 0.2.0); a timeout denies.
	NeedsApproval  bool
	TimeoutSeconds uint32
}

// Allow lets the call through.
var Allow = Verdict{}

// Block stops the call with a reason, an optional machine code and details (any JSON value).
func Block(message string, code string, details any) Verdict {
	v := Verdict{Blocked: true, Message: message}
	if code != "" {
		v.Code = &code
	}
	if details != nil {
		if b, err := json.Marshal(details); err == nil {
			s := string(b)
			v.DetailsJSON = &s
		}
	}
	return v
}

// NeedsApproval asks a human: the call parks until an approver approves it (the chain goes
// on) or denies it, or timeoutSeconds pass (0: the host's default), which blocks it.
func NeedsApproval(message string, code string, details any, timeoutSeconds uint32) Verdict {
	v := Block(message, code, details)
	v.Blocked = false
	v.NeedsApproval = true
	v.TimeoutSeconds = timeoutSeconds
	return v
}

// HookResult is a hook's answer: Proceed, or Replace(json).
type HookResult struct {
	Replace *string
}

// Proceed leaves the call unchanged.
var Proceed = HookResult{}

// Plugin is what every plugin implements: validate the operator's config (a JSON object).
type Plugin interface {
	Describe(config []byte) (Info, error)
}

// Policy is implemented by plugins that declared policy stages.
type Policy interface {
	ShouldBlock(in *StageInput) (Verdict, error)
}

// Hooks is implemented by plugins that declared hook stages.
type Hooks interface {
	Hook(in *StageInput) (HookResult, error)
}

// ToolReads is what a plugin reads of one tool's stage input (contract 0.2.1 `inputs`):
// Tool is a method or "*" (every tool not named).
type ToolReads struct {
	Tool   string
	Params bool
	Facts  bool
}

// Reader is implemented by plugins that say what they read of the stage input, per tool;
// asked once after Describe. The host lowers only those parts into the plugin (the others
// arrive as ParamsJSON "" and Facts nil), which is most of what a stage call costs. A plugin
// that does not implement it reads everything.
type Reader interface {
	Reads() []ToolReads
}

// FailureObserver is implemented by plugins that want `events.on-tool-failure`.
type FailureObserver interface {
	OnToolFailure(reportJSON string)
}

var registered Plugin

// Register makes p the component's plugin; call it from an init function.
func Register(p Plugin) { registered = p }
