package guest

import (
	"encoding/json"
	"math/big"
	"regexp"
)

// Facts: what a tool call moves to whom, from its normalised params — the Go twin of the
// Rust SDK's hak_guest::facts (same tools, same rules).

// Asset kinds.
const (
	Hbar  = "hbar"
	Token = "token"
	NFT   = "nft"
)

// Movement is one recipient's share of a call. To is "" for a new account.
type Movement struct {
	Kind, ID, To string
	Amount       *big.Int
	Allowance    bool
}

var intPattern = regexp.MustCompile(`^-?\d+$`)

// AmountOf reads a 64-bit amount written as a decimal string (or an integer number).
func AmountOf(v any) (*big.Int, bool) {
	switch a := v.(type) {
	case string:
		if !intPattern.MatchString(a) {
			return nil, false
		}
		n, ok := new(big.Int).SetString(a, 10)
		return n, ok
	case json.Number:
		if !intPattern.MatchString(string(a)) {
			return nil, false
		}
		n, ok := new(big.Int).SetString(string(a), 10)
		return n, ok
	}
	return nil, false
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

var u64Max = new(big.Int).SetUint64(^uint64(0))

func credits(out []Movement, entries any, kind, id string) []Movement {
	for _, e := range list(entries) {
		m := obj(e)
		if a, ok := AmountOf(m["amount"]); ok && a.Sign() > 0 {
			out = append(out, Movement{Kind: kind, ID: id, To: str(m["accountId"]), Amount: a})
		}
	}
	return out
}

func nonNegative(v any) *big.Int {
	a, ok := AmountOf(v)
	if !ok || a.Sign() < 0 {
		return new(big.Int)
	}
	return a
}

// Movements lists the value a call moves to others (empty for tools that move none).
func Movements(method string, normalised any) []Movement {
	n := obj(normalised)
	var out []Movement
	if n == nil {
		return out
	}
	token := str(n["tokenId"])
	switch method {
	case "transfer_hbar_tool", "transfer_hbar_with_allowance_tool":
		out = credits(out, n["hbarTransfers"], Hbar, "")
	case "transfer_fungible_token_tool", "transfer_fungible_token_with_allowance_tool", "airdrop_fungible_token_tool":
		out = credits(out, n["tokenTransfers"], Token, token)
	case "transfer_non_fungible_token_tool", "transfer_non_fungible_token_with_allowance_tool":
		for _, r := range list(n["recipients"]) {
			out = append(out, Movement{Kind: NFT, ID: token, To: str(obj(r)["recipientId"]), Amount: big.NewInt(1)})
		}
	case "approve_hbar_allowance_tool", "delete_hbar_allowance_tool":
		for _, a := range list(n["hbarApprovals"]) {
			m := obj(a)
			out = append(out, Movement{Kind: Hbar, To: str(m["spenderAccountId"]), Amount: nonNegative(m["amount"]), Allowance: true})
		}
	case "approve_token_allowance_tool", "delete_token_allowance_tool":
		for _, a := range list(n["tokenApprovals"]) {
			m := obj(a)
			out = append(out, Movement{Kind: Token, ID: str(m["tokenId"]), To: str(m["spenderAccountId"]), Amount: nonNegative(m["amount"]), Allowance: true})
		}
	case "approve_nft_allowance_tool":
		count := big.NewInt(int64(len(list(n["serialNumbers"]))))
		if all, _ := n["allSerials"].(bool); all {
			count = new(big.Int).Set(u64Max)
		}
		out = append(out, Movement{Kind: NFT, ID: token, To: str(n["spenderAccountId"]), Amount: count, Allowance: true})
	case "create_account_tool":
		if a, ok := AmountOf(n["initialBalance"]); ok && a.Sign() > 0 {
			out = append(out, Movement{Kind: Hbar, Amount: a})
		}
	case "delete_account_tool":
		out = append(out, Movement{Kind: Hbar, To: str(n["transferAccountId"]), Amount: new(big.Int).Set(u64Max)})
	}
	return out
}

// ValueTools are the tools that move value or grant allowances.
var ValueTools = []string{
	"transfer_hbar_tool", "transfer_hbar_with_allowance_tool", "transfer_fungible_token_tool",
	"transfer_fungible_token_with_allowance_tool", "airdrop_fungible_token_tool",
	"transfer_non_fungible_token_tool", "transfer_non_fungible_token_with_allowance_tool",
	"approve_hbar_allowance_tool", "delete_hbar_allowance_tool", "approve_token_allowance_tool",
	"delete_token_allowance_tool", "approve_nft_allowance_tool", "create_account_tool",
	"delete_account_tool", "delete_non_fungible_token_allowance_tool",
}

var entityPattern = regexp.MustCompile(`^\d{1,20}\.\d{1,20}\.\d{1,20}$`)

// IsEntityID reports whether s is an entity id shard.realm.num.
func IsEntityID(s string) bool { return entityPattern.MatchString(s) }
