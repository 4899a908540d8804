// "Max Recipients Policy", the kit's MaxRecipientsPolicy in Go: the twin of
// example-plugins/rust/max-recipients (same config, verdicts and messages).
package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	guest "hak.local/guest"
)

var defaultTools = []string{
	"transfer_hbar_tool", "transfer_hbar_with_allowance_tool", "airdrop_fungible_token_tool",
	"transfer_fungible_token_tool", "transfer_fungible_token_with_allowance_tool",
	"transfer_non_fungible_token_with_allowance_tool", "transfer_non_fungible_token_tool",
}

var field = map[string]string{
	"transfer_hbar_tool":                              "hbarTransfers",
	"transfer_hbar_with_allowance_tool":               "hbarTransfers",
	"airdrop_fungible_token_tool":                     "tokenTransfers",
	"transfer_fungible_token_tool":                    "tokenTransfers",
	"transfer_fungible_token_with_allowance_tool":     "tokenTransfers",
	"transfer_non_fungible_token_tool":                "transfers",
	"transfer_non_fungible_token_with_allowance_tool": "transfers",
}

type rule struct {
	Field       *string `json:"field"`
	AmountField *string `json:"amountField"`
	Count       *uint64 `json:"count"`
}

type policy struct {
	max    uint64
	custom map[string]rule
}

// sign of an amount (string or number), as the Rust SDK's Amount reads it; ok=false if unreadable.
func sign(v any) (int, bool) {
	switch a := v.(type) {
	case string:
		return digitsSign(a)
	case json.Number:
		f, err := a.Float64()
		if err != nil {
			return 0, false
		}
		switch {
		case f > 0:
			return 1, true
		case f < 0:
			return -1, true
		}
		return 0, true
	}
	return 0, false
}

func (p *policy) Describe(config []byte) (guest.Info, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(config, &raw); err != nil {
		return guest.Info{}, fmt.Errorf("MaxRecipientsPolicy: invalid config: %v", err)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "maxRecipients" && k != "additionalTools" && k != "customCounts" {
			return guest.Info{}, fmt.Errorf("MaxRecipientsPolicy: invalid config: unknown field `%s`", k)
		}
	}
	var max uint64
	if err := json.Unmarshal(raw["maxRecipients"], &max); err != nil || max == 0 {
		return guest.Info{}, fmt.Errorf("MaxRecipientsPolicy: 'maxRecipients' must be a positive integer. Received: %s", string(raw["maxRecipients"]))
	}
	var additional []string
	if a, ok := raw["additionalTools"]; ok {
		_ = json.Unmarshal(a, &additional)
	}
	p.max = max
	p.custom = map[string]rule{}
	if c, ok := raw["customCounts"]; ok {
		_ = json.Unmarshal(c, &p.custom)
	}
	for tool, r := range p.custom {
		if (r.Field == nil) == (r.Count == nil) {
			return guest.Info{}, fmt.Errorf("MaxRecipientsPolicy: customCounts.%s needs exactly one of 'field' or 'count'", tool)
		}
	}
	return guest.Info{
		Name:          "Max Recipients Policy",
		Description:   fmt.Sprintf("Limits the maximum number of recipients to %d", max),
		RelevantTools: append(append([]string{}, defaultTools...), additional...),
		PolicyStages:  []guest.Stage{guest.PostParamsNormalization},
	}, nil
}

// Reads: custom rules and the built-in ones read normalisedParams, the EVM tools the facts'
// movements; nothing else is lowered into the plugin.
func (p *policy) Reads() []guest.ToolReads {
	var out []guest.ToolReads
	for tool := range p.custom {
		out = append(out, guest.ToolReads{Tool: tool, Params: true})
	}
	for tool := range factCounted {
		if _, custom := p.custom[tool]; !custom {
			out = append(out, guest.ToolReads{Tool: tool, Facts: true})
		}
	}
	return append(out, guest.ToolReads{Tool: "*", Params: true})
}

func (p *policy) count(in *guest.StageInput) (uint64, error) {
	if _, custom := p.custom[in.Method]; !custom {
		return countBuiltin(in)
	}
	params, err := in.Params()
	if err != nil {
		return 0, err
	}
	n, _ := params["normalisedParams"].(map[string]any)
	if r, ok := p.custom[in.Method]; ok {
		if r.Count != nil {
			return *r.Count, nil
		}
		var at any = n
		for _, key := range strings.Split(*r.Field, ".") {
			m, _ := at.(map[string]any)
			at = m[key]
		}
		items, ok := at.([]any)
		if !ok {
			return 0, nil
		}
		if r.AmountField == nil {
			return uint64(len(items)), nil
		}
		var c uint64
		for _, item := range items {
			m, _ := item.(map[string]any)
			v, present := m[*r.AmountField]
			if !present || v == nil {
				c++
				continue
			}
			if s, ok := sign(v); ok && s > 0 {
				c++
			}
		}
		return c, nil
	}
	return 0, nil
}

// rawSign is sign() on a raw JSON value, without decoding: a decimal string or a number.
func rawSign(raw string) (int, bool) {
	if s, ok := guest.StringValue(raw); ok {
		return digitsSign(s)
	}
	if raw == "" || raw[0] == '"' || raw[0] == '{' || raw[0] == '[' || raw == "true" || raw == "false" {
		return 0, false
	}
	return sign(json.Number(raw))
}

// digitsSign is the sign of an optionally signed run of digits.
func digitsSign(s string) (int, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	zero := true
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		if s[i] != '0' {
			zero = false
		}
	}
	switch {
	case zero:
		return 0, true
	case neg:
		return -1, true
	}
	return 1, true
}

// factCounted are counted from the host's facts when listed in additionalTools (not among
// the kit's defaults).
var factCounted = map[string]bool{"transfer_erc20_tool": true, "transfer_erc721_tool": true, "mint_erc721_tool": true}

// countBuiltin reads only normalisedParams.<field>[].amount from the params text.
func countBuiltin(in *guest.StageInput) (uint64, error) {
	if factCounted[in.Method] {
		return uint64(len(in.Movements())), nil
	}
	f, ok := field[in.Method]
	if !ok {
		return 0, fmt.Errorf("MaxRecipientsPolicy: Unhandled tool '%s'. Provide a custom strategy in the constructor.", in.Method)
	}
	raw, ok := guest.RawField(in.ParamsJSON, "normalisedParams", f)
	if !ok || raw == "null" {
		return 0, nil
	}
	var c uint64
	var bad string
	// Each entry is read once: its amount found on the way to its end.
	if !guest.ItemFields(raw, "amount", func(amount string, present bool) {
		if !present || amount == "null" {
			c++
			return
		}
		s, ok := rawSign(amount)
		if !ok && bad == "" {
			bad = amount
		}
		if s > 0 {
			c++
		}
	}) {
		return 0, nil
	}
	if bad != "" {
		return 0, fmt.Errorf("cannot read stage params for %s: bad amount %s", in.Method, bad)
	}
	return c, nil
}

func (p *policy) ShouldBlock(in *guest.StageInput) (guest.Verdict, error) {
	c, err := p.count(in)
	if err != nil {
		return guest.Verdict{}, err
	}
	if c <= p.max {
		return guest.Allow, nil
	}
	guest.Log(guest.LevelWarn, fmt.Sprintf("MaxRecipientsPolicy: %s tool call rejected, expected max %d recipients, got %d", in.Method, p.max, c))
	return guest.Block(fmt.Sprintf("%d recipients exceed the maximum of %d", c, p.max), "MAX_RECIPIENTS_EXCEEDED",
		map[string]any{"recipientCount": c, "maxRecipients": p.max}), nil
}

func init() { guest.Register(&policy{}) }

func main() {}
