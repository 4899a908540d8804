// "Spend Limit Policy" in Go: the twin of example-plugins/rust/spend-limit (same config, caps,
// rolling per-context budget through the host's atomic budget.reserve, messages and codes).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strings"

	guest "hak.local/guest"
)

type tokenConfig struct {
	MaxPerRecipient   json.RawMessage `json:"maxPerRecipient"`
	MaxPerTransaction json.RawMessage `json:"maxPerTransaction"`
	DailyBudget       json.RawMessage `json:"dailyBudget"`
}

type config struct {
	MaxHbarPerRecipient   json.RawMessage        `json:"maxHbarPerRecipient"`
	MaxHbarPerTransaction json.RawMessage        `json:"maxHbarPerTransaction"`
	DailyHbarBudget       json.RawMessage        `json:"dailyHbarBudget"`
	Tokens                map[string]tokenConfig `json:"tokens"`
	BudgetWindowSeconds   *uint64                `json:"budgetWindowSeconds"`
}

type caps struct{ perRecipient, perTransaction, budget *big.Int }

type policy struct {
	caps          map[string]caps
	windowSeconds uint32
}

var decimal = regexp.MustCompile(`^(\d*)(?:\.(\d*))?$`)

func decimalUnits(text string, decimals int) (*big.Int, bool) {
	m := decimal.FindStringSubmatch(text)
	if m == nil || (m[1] == "" && m[2] == "") || len(m[2]) > decimals {
		return nil, false
	}
	whole := m[1]
	if whole == "" {
		whole = "0"
	}
	frac := m[2] + strings.Repeat("0", decimals-len(m[2]))
	n, ok := new(big.Int).SetString(whole+frac, 10)
	return n, ok
}

func capOf(field string, raw json.RawMessage, decimals int) (*big.Int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var text string
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &text)
		text = strings.TrimSpace(text)
	} else if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		text = string(raw)
	} else {
		return nil, fmt.Errorf("invalid config: %s: %s is not an amount", field, string(raw))
	}
	n, ok := decimalUnits(text, decimals)
	if !ok {
		return nil, fmt.Errorf("invalid config: %s: %q is not a non-negative amount with at most %d decimals", field, text, decimals)
	}
	return n, nil
}

func hbarText(t *big.Int) string {
	q, r := new(big.Int).QuoRem(t, big.NewInt(100000000), new(big.Int))
	if r.Sign() == 0 {
		return q.String() + " HBAR"
	}
	digits := r.String()
	frac := strings.TrimRight(strings.Repeat("0", 8-len(digits))+digits, "0")
	return q.String() + "." + frac + " HBAR"
}

func amountText(asset string, units *big.Int) string {
	if asset == "hbar" {
		return hbarText(units)
	}
	return units.String() + " units of " + asset
}

func (p *policy) Describe(raw []byte) (guest.Info, error) {
	var c config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return guest.Info{}, fmt.Errorf("invalid config: %v", err)
	}
	p.caps = map[string]caps{}
	var h caps
	var err error
	if h.perRecipient, err = capOf("maxHbarPerRecipient", c.MaxHbarPerRecipient, 8); err != nil {
		return guest.Info{}, err
	}
	if h.perTransaction, err = capOf("maxHbarPerTransaction", c.MaxHbarPerTransaction, 8); err != nil {
		return guest.Info{}, err
	}
	if h.budget, err = capOf("dailyHbarBudget", c.DailyHbarBudget, 8); err != nil {
		return guest.Info{}, err
	}
	p.caps["hbar"] = h
	ids := make([]string, 0, len(c.Tokens))
	for id := range c.Tokens {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t := c.Tokens[id]
		if !guest.IsEntityID(id) {
			return guest.Info{}, fmt.Errorf("invalid config: tokens.%s: not a token id (0.0.x)", id)
		}
		var k caps
		if k.perRecipient, err = capOf("tokens."+id+".maxPerRecipient", t.MaxPerRecipient, 0); err != nil {
			return guest.Info{}, err
		}
		if k.perTransaction, err = capOf("tokens."+id+".maxPerTransaction", t.MaxPerTransaction, 0); err != nil {
			return guest.Info{}, err
		}
		if k.budget, err = capOf("tokens."+id+".dailyBudget", t.DailyBudget, 0); err != nil {
			return guest.Info{}, err
		}
		p.caps[id] = k
	}
	any := false
	for _, k := range p.caps {
		any = any || k.perRecipient != nil || k.perTransaction != nil || k.budget != nil
	}
	if !any {
		return guest.Info{}, fmt.Errorf("invalid config: set at least one cap (maxHbarPerRecipient, maxHbarPerTransaction, dailyHbarBudget or tokens)")
	}
	window := uint64(86400)
	if c.BudgetWindowSeconds != nil {
		window = *c.BudgetWindowSeconds
	}
	if window == 0 || window > 366*86400 {
		return guest.Info{}, fmt.Errorf("invalid config: budgetWindowSeconds: must be 1–31622400")
	}
	p.windowSeconds = uint32(window)
	return guest.Info{
		Name:          "Spend Limit Policy",
		Description:   "Caps value per recipient, per transaction and per rolling day",
		RelevantTools: guest.ValueTools,
		PolicyStages:  []guest.Stage{guest.PostParamsNormalization},
	}, nil
}

type group struct {
	asset string
	ms    []guest.Movement
}

func (p *policy) byAsset(ms []guest.Movement) []group {
	index := map[string]int{}
	var out []group
	for _, m := range ms {
		key := ""
		switch m.Kind {
		case guest.Hbar:
			key = "hbar"
		case guest.Token:
			key = m.ID
		default:
			continue
		}
		if _, ok := p.caps[key]; !ok {
			continue
		}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, group{asset: key})
		}
		out[i].ms = append(out[i].ms, m)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].asset < out[b].asset })
	return out
}

func (p *policy) ShouldBlock(in *guest.StageInput) (guest.Verdict, error) {
	for _, g := range p.byAsset(in.Movements()) {
		k := p.caps[g.asset]
		total := new(big.Int)
		for _, m := range g.ms {
			total.Add(total, m.Amount)
			if k.perRecipient != nil && m.Amount.Cmp(k.perRecipient) > 0 {
				to := m.To
				var recipient any = m.To
				if to == "" {
					to, recipient = "a new account", nil
				}
				return guest.Block(
					fmt.Sprintf("%s to %s exceeds the per-recipient limit of %s", amountText(g.asset, m.Amount), to, amountText(g.asset, k.perRecipient)),
					"SPEND_LIMIT_RECIPIENT",
					map[string]any{"asset": g.asset, "recipient": recipient, "amount": m.Amount.String(), "limit": k.perRecipient.String()}), nil
			}
		}
		if k.perTransaction != nil && total.Cmp(k.perTransaction) > 0 {
			return guest.Block(
				fmt.Sprintf("%s in one call exceeds the per-transaction limit of %s", amountText(g.asset, total), amountText(g.asset, k.perTransaction)),
				"SPEND_LIMIT_TRANSACTION",
				map[string]any{"asset": g.asset, "amount": total.String(), "limit": k.perTransaction.String()}), nil
		}
		if k.budget != nil {
			// One atomic step: the host commits it if the transaction applies (or may have).
			overBudget := func(sum *big.Int) guest.Verdict {
				return guest.Block(
					fmt.Sprintf("%s would exceed the budget of %s per %d s (%s already spent)", amountText(g.asset, total), amountText(g.asset, k.budget), p.windowSeconds, amountText(g.asset, sum)),
					"SPEND_LIMIT_BUDGET",
					map[string]any{"asset": g.asset, "amount": total.String(), "spent": sum.String(), "budget": k.budget.String()})
			}
			if !total.IsUint64() {
				return overBudget(new(big.Int)), nil
			}
			limit := uint64(math.MaxUint64)
			if k.budget.IsUint64() {
				limit = k.budget.Uint64()
			}
			_, err := guest.Reserve("spent:"+g.asset, total.Uint64(), limit, p.windowSeconds)
			var over guest.OverLimit
			switch {
			case errors.As(err, &over):
				return overBudget(new(big.Int).SetUint64(over.Spent)), nil
			case err != nil:
				return guest.Block("the budget cannot be checked: "+err.Error(), "SPEND_LIMIT_UNAVAILABLE", map[string]any{"asset": g.asset}), nil
			}
		}
	}
	return guest.Allow, nil
}

func init() { guest.Register(&policy{}) }

func main() {}
