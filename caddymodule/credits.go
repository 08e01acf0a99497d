package caddymodule

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgate-rpc/tollgate/caddymodule/meter"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The bindings parse their ABI when constructed; once is enough. TestUSDT's
// approve is the ERC-20 approve every USDT deployment has.
var abis = sync.OnceValues(func() (*testusdt.TestUSDT, *revenuevault.RevenueVault) {
	return testusdt.NewTestUSDT(), revenuevault.NewRevenueVault()
})

// serveDepositInstructions answers GET /credits/initiate and its alias
// /credits/deposit/initiate: the two transactions a wallet sends to turn
// USDT into credits of an account (DESIGN §5).
func (h *Handler) serveDepositInstructions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var account string
	if _, present := apiKey(r); present {
		u, ok := h.authenticate(w, r)
		if !ok {
			return nil
		}
		account = u.KeyID
		if id := q.Get("key_id"); id != "" && id != account {
			writeError(w, http.StatusBadRequest, "conflicting_account", "key_id names another account than X-API-Key; send one of them")
			return nil
		}
	} else if id := q.Get("key_id"); id != "" {
		if err := accounts.Validate(id); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_key_id", "key_id must be an account id: key_ followed by 26 ULID characters")
			return nil
		}
		st, err := h.meter.AccountStatus(r.Context(), id)
		switch {
		case err != nil:
			h.writeUnavailable(w, err)
			return nil
		case st == meter.KeyUnknown:
			writeError(w, http.StatusNotFound, "unknown_account", "no account "+id+"; create one with POST /api/keys or POST /v1/machine/register")
			return nil
		case st == meter.KeyRevoked:
			writeError(w, http.StatusConflict, "revoked_account", "account "+id+" belongs to a revoked key; deposits to it would not be usable")
			return nil
		case st == meter.KeyRecovering:
			writeRecoveringREST(w)
			return nil
		}
		account = id
	} else {
		writeError(w, http.StatusBadRequest, "missing_account",
			"say which account to credit: send your API key in the X-API-Key header, or add ?key_id=key_… (the key_id returned at key creation)")
		return nil
	}

	raw := q.Get("amount")
	if raw == "" {
		writeError(w, http.StatusBadRequest, "missing_amount", fmt.Sprintf("amount is required: USDT with at most 6 decimals, at least %s", h.pay.minDeposit.Decimal()))
		return nil
	}
	amount, err := money.Parse(raw)
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, "invalid_amount", "amount must be a positive USDT amount with at most 6 decimals, such as 10 or 2.5")
		return nil
	case amount < h.pay.minDeposit:
		writeError(w, http.StatusBadRequest, "below_minimum", fmt.Sprintf("amount %s is below the minimum deposit of %s USDT", amount.Decimal(), h.pay.minDeposit.Decimal()))
		return nil
	case amount > h.pay.maxDeposit:
		writeError(w, http.StatusBadRequest, "above_maximum", fmt.Sprintf("amount %s is above the maximum deposit of %s USDT", amount.Decimal(), h.pay.maxDeposit.Decimal()))
		return nil
	}
	acc32, err := accounts.ToBytes32(account)
	if err != nil { // ids come from Validate or the key store; cannot happen
		writeError(w, http.StatusBadRequest, "invalid_key_id", err.Error())
		return nil
	}
	usdt, vault := abis()
	writeJSON(w, http.StatusOK, map[string]any{
		"chain_id":             chains.Default,
		"vault_address":        h.pay.vault.Hex(),
		"usdt_address":         h.pay.usdt.Hex(),
		"account":              account,
		"amount_usdt":          money.USDT(amount),
		"amount_raw":           amount.String(),
		"approve":              map[string]string{"to": h.pay.usdt.Hex(), "data": hexutil.Encode(usdt.PackApprove(h.pay.vault, amount.Big()))},
		"deposit":              map[string]string{"to": h.pay.vault.Hex(), "data": hexutil.Encode(vault.PackDeposit(amount.Big(), acc32))},
		"explorer_url":         h.pay.explorer + "/address/" + h.pay.vault.Hex(),
		"confirmations":        depositConfirmations,
		"minimum_deposit_usdt": money.USDT(h.pay.minDeposit),
		"note":                 "send approve first, then deposit, from any wallet holding the USDT; credits arrive after 25 confirmations",
	})
	return nil
}
