package guest

import "errors"

// ErrBudgetUnavailable wraps the state store's reason when a reservation cannot be checked;
// a policy must then block.
var ErrBudgetUnavailable = errors.New("budget unavailable")

// OverLimit is Reserve's answer when granting would pass the limit: what the window already holds.
type OverLimit struct{ Spent uint64 }

func (o OverLimit) Error() string { return "over the limit" }

// ExchangeRate is the network's HBAR exchange rate: CentEquivalent US cents buy
// HbarEquivalent HBAR until ExpirationSeconds (Unix).
type ExchangeRate struct {
	HbarEquivalent    uint32
	CentEquivalent    uint32
	ExpirationSeconds uint64
}
