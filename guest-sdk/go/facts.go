package guest

import (
	"math/big"
	"regexp"
	"unsafe"
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

// Canonical ABI layouts (all little-endian):
//   facts (52 bytes, align 4): movements list @0, source option<string> @8, tokens
//     list<string> @20, changes list<entity> @28, memo option<string> @36, scheduled @48
//   movement (40 bytes, align 8): asset variant @0 (tag u8, string @4), to option<string> @12,
//     amount u64 @24, via enum @32
//   entity (16 bytes): kind string @0, id string @8
var assetKinds = [3]string{Hbar, Token, NFT}

func stringAt(p unsafe.Pointer, at uintptr) string {
	return liftString(unsafe.Pointer(uintptr(getU32(p, at))), getU32(p, at+4))
}

func optionStringAt(p unsafe.Pointer, at uintptr) (string, bool) {
	if getU8(p, at) == 0 {
		return "", false
	}
	return stringAt(p, at+4), true
}

func liftFacts(p unsafe.Pointer) *Facts {
	f := &Facts{}
	base, n := unsafe.Pointer(uintptr(getU32(p, 0))), getU32(p, 4)
	f.Movements = make([]Movement, n)
	for i := uint32(0); i < n; i++ {
		m := unsafe.Add(base, uintptr(i)*40)
		tag := getU8(m, 0)
		mv := Movement{Amount: new(big.Int).SetUint64(getU64(m, 24)), Allowance: getU8(m, 32) == 1}
		if int(tag) < len(assetKinds) {
			mv.Kind = assetKinds[tag]
		}
		if tag != 0 {
			mv.ID = stringAt(m, 4)
		}
		mv.To, _ = optionStringAt(m, 12)
		f.Movements[i] = mv
	}
	f.Source, _ = optionStringAt(p, 8)
	base, n = unsafe.Pointer(uintptr(getU32(p, 20))), getU32(p, 24)
	f.Tokens = make([]string, n)
	for i := uint32(0); i < n; i++ {
		f.Tokens[i] = stringAt(base, uintptr(i)*8)
	}
	base, n = unsafe.Pointer(uintptr(getU32(p, 28))), getU32(p, 32)
	f.Changes = make([]Entity, n)
	for i := uint32(0); i < n; i++ {
		e := unsafe.Add(base, uintptr(i)*16)
		f.Changes[i] = Entity{Kind: stringAt(e, 0), ID: stringAt(e, 8)}
	}
	if memo, ok := optionStringAt(p, 36); ok {
		f.Memo = &memo
	}
	f.Scheduled = getU8(p, 48) != 0
	return f
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
