// "Recipient Allowlist Policy" in Go: the twin of example-plugins/rust/recipient-allowlist.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	guest "hak.local/guest"
)

type config struct {
	Accounts         *[]string `json:"accounts"`
	AllowNewAccounts *bool     `json:"allowNewAccounts"`
}

type policy struct {
	accounts map[string]bool
	allowNew bool
}

func (p *policy) Describe(raw []byte) (guest.Info, error) {
	var c config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return guest.Info{}, fmt.Errorf("invalid config: %v", err)
	}
	if c.Accounts == nil {
		return guest.Info{}, fmt.Errorf("invalid config: missing field `accounts`")
	}
	p.accounts = map[string]bool{}
	for i, id := range *c.Accounts {
		if !guest.IsEntityID(id) {
			return guest.Info{}, fmt.Errorf("invalid config: accounts.%d: %q is not an account id (0.0.x)", i, id)
		}
		p.accounts[id] = true
	}
	p.allowNew = c.AllowNewAccounts == nil || *c.AllowNewAccounts
	return guest.Info{
		Name:          "Recipient Allowlist Policy",
		Description:   "Value and allowances may only go to allowlisted accounts",
		RelevantTools: guest.ValueTools,
		PolicyStages:  []guest.Stage{guest.PostParamsNormalization},
	}, nil
}

func (p *policy) ShouldBlock(in *guest.StageInput) (guest.Verdict, error) {
	for _, m := range in.Movements() {
		ok := p.allowNew
		if m.To != "" {
			ok = p.accounts[m.To]
		}
		if !ok {
			to := m.To
			var recipient any = m.To
			if to == "" {
				to, recipient = "a new account", nil
			}
			return guest.Block(to+" is not an allowlisted recipient", "RECIPIENT_NOT_ALLOWED", map[string]any{"recipient": recipient}), nil
		}
	}
	return guest.Allow, nil
}

func init() { guest.Register(&policy{}) }

func main() {}
