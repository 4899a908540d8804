package guest

import (
	"math/big"
	"regexp"
)

// Facts: what a tool call does, as the host states it (contract 0.2.0 `facts`), lifted from
// the stage input's record (layouts below) — no params JSON to read, the same answers as the
// Rust and JS SDKs.

// Asset kinds.
const (
	Hbar  = "hbar"
	Token = "token"
	NFT   = "nft"
)

// Movement is one recipient's share of a call. To is "" for a new account; Amount is
// tinybars, base units or a count of NFTs (u64 max: all of it).
type Movement struct {
	Kind, ID, To string
	Amount       *big.Int
	Allowance    bool
}

// Entity is an account, token or topic a call updates or deletes.
type Entity struct{ Kind, ID string }

// Facts of one call.
type Facts struct {
	Movements []Movement
	// Source is the sending or owning account, "" when the tool names none.
	Source    string
	Tokens    []string
	Changes   []Entity
	Memo      *string
	Scheduled bool
}

// Movements lists the value the call moves to others (empty before normalisation).
func (in *StageInput) Movements() []Movement {
	if in.Facts == nil {
		return nil
	}
	return in.Facts.Movements
}

// ValueTools are the tools that move value or grant allowances.
var ValueTools = []string{
	"transfer_hbar_tool", "transfer_hbar_with_allowance_tool", "transfer_fungible_token_tool",
	"transfer_fungible_token_with_allowance_tool", "airdrop_fungible_token_tool",
	"transfer_non_fungible_token_tool", "transfer_non_fungible_token_with_allowance_tool",
	"approve_hbar_allowance_tool", "delete_hbar_allowance_tool", "approve_token_allowance_tool",
	"delete_token_allowance_tool", "approve_nft_allowance_tool", "create_account_tool",
	"delete_account_tool", "delete_non_fungible_token_allowance_tool",
	// ERC-20/721 through their contracts (the token is the contract's id).
	"transfer_erc20_tool", "transfer_erc721_tool", "mint_erc721_tool",
	// Signing a schedule may execute it: its facts are what the scheduled body moves.
	"sign_schedule_transaction_tool",
	// A new treasury receives the old treasury's whole balance of the token (all of it).
	"update_token_tool",
}

var entityPattern = regexp.MustCompile(`^\d{1,20}\.\d{1,20}\.\d{1,20}$`)

// IsEntityID reports whether s is an entity id shard.realm.num.
func IsEntityID(s string) bool { return entityPattern.MatchString(s) }
