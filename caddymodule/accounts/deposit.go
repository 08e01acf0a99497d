package accounts

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgate-rpc/tollgate/caddymodule/payment"
	"github.com/tollgate-rpc/tollgate/caddymodule/web"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
	"github.com/tollgate-rpc/tollgate/contracts/bindings/testusdt"
	"github.com/tollgate-rpc/tollgate/shared/accounts"
	"github.com/tollgate-rpc/tollgate/shared/chains"
	"github.com/tollgate-rpc/tollgate/shared/meter"
	"github.com/tollgate-rpc/tollgate/shared/money"
)

// The bindings parse their ABI when constructed; once is enough. TestUSDT's
// approve is the ERC-20 approve every USDT deployment has.
var abis = sync.OnceValues(func() (*testusdt.TestUSDT, *revenuevault.RevenueVault) {
	return testusdt.NewTestUSDT(), revenuevault.NewRevenueVault()
})

// DepositInstructions answers GET /credits/initiate and its alias
// /credits/deposit/initiate: the two transactions a wallet sends to turn
// USDT into credits of an account.
func (h *Handler) DepositInstructions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var account string
	if _, present := web.APIKey(r); present {
		u, ok := h.Authenticate(w, r)
		if !ok {
			return nil
		}
		account = u.KeyID
		if id := q.Get("key_id"); id != "" && id != account {
			web.Error(w, http.StatusBadRequest, "conflicting_account", "key_id names another account than X-API-Key; send one of them")
			return nil
		}
	} else if id := q.Get("key_id"); id != "" {
		if err := accounts.Validate(id); err != nil {
			web.Error(w, http.StatusBadRequest, "invalid_key_id", "key_id must be an account id: key_ followed by 26 ULID characters")
			return nil
		}
		st, err := h.meter.AccountStatus(r.Context(), id)
		switch {
		case err != nil:
			web.Unavailable(w, h.logger, err)
			return nil
		case st == meter.KeyUnknown:
			web.Error(w, http.StatusNotFound, "unknown_account", "no account "+id+"; create one with POST /api/keys or POST /v1/machine/register")
			return nil
		case st == meter.KeyRevoked:
			web.Error(w, http.StatusConflict, "revoked_account", "account "+id+" belongs to a revoked key; deposits to it would not be usable")
			return nil
		case st == meter.KeyRecovering:
			web.RecoveringREST(w)
			return nil
		}
		account = id
	} else {
		web.Error(w, http.StatusBadRequest, "missing_account",
			"say which account to credit: send your API key in the X-API-Key header, or add ?key_id=key_… (the key_id returned at key creation)")
		return nil
	}

	amount, ok := h.depositAmount(w, q.Get("amount"), q.Get("amount_units"))
	if !ok {
		return nil
	}
	acc32, err := accounts.ToBytes32(account)
	if err != nil { // ids come from Validate or the key store; cannot happen
		web.Error(w, http.StatusBadRequest, "invalid_key_id", err.Error())
		return nil
	}
	usdt, vault := abis()
	// The two transactions in the order they must be mined, each complete:
	// chain, recipient, calldata and value (no ETH/POL is sent, only USDT).
	approve := map[string]any{"step": 1, "name": "approve", "chain_id": chains.Default, "to": h.pay.USDT.Hex(),
		"data": hexutil.Encode(usdt.PackApprove(h.pay.Vault, amount.Big())), "value": "0x0"}
	deposit := map[string]any{"step": 2, "name": "deposit", "chain_id": chains.Default, "to": h.pay.Vault.Hex(),
		"data": hexutil.Encode(vault.PackDeposit(amount.Big(), acc32)), "value": "0x0"}
	web.JSON(w, http.StatusOK, map[string]any{
		"chain_id":             chains.Default,
		"vault_address":        h.pay.Vault.Hex(),
		"usdt_address":         h.pay.USDT.Hex(),
		"account":              account,
		"amount_usdt":          money.USDT(amount),
		"amount_raw":           amount.String(),
		"amount_units":         amount.String(),
		"approve":              approve,
		"deposit":              deposit,
		"transactions":         []map[string]any{approve, deposit},
		"explorer_url":         h.pay.Explorer + "/address/" + h.pay.Vault.Hex(),
		"confirmations":        payment.DepositConfirmations,
		"minimum_deposit_usdt": money.USDT(h.pay.MinDeposit),
		"note":                 "send approve first, then deposit, from any wallet holding the USDT; credits arrive after 25 confirmations",
	})
	return nil
}

// depositAmount reads the deposit amount: amount in whole USDT (up to 6
// decimals) or amount_units in base units (1 USDT = 1,000,000), never both.
// Every refusal names the unit it read the number in, so a program that sent
// base units as amount learns why 1000000 is a million USDT.
func (h *Handler) depositAmount(w http.ResponseWriter, rawUSDT, rawUnits string) (money.Units, bool) {
	minMsg := fmt.Sprintf("%s USDT (amount=%s or amount_units=%s)", h.pay.MinDeposit.Decimal(), h.pay.MinDeposit.Decimal(), h.pay.MinDeposit.String())
	maxMsg := fmt.Sprintf("%s USDT (amount=%s or amount_units=%s)", h.pay.MaxDeposit.Decimal(), h.pay.MaxDeposit.Decimal(), h.pay.MaxDeposit.String())
	var amount money.Units
	var unit string
	switch {
	case rawUSDT != "" && rawUnits != "":
		web.Error(w, http.StatusBadRequest, "conflicting_amount", "send amount (whole USDT) or amount_units (base units, 1 USDT = 1000000), not both")
		return 0, false
	case rawUnits != "":
		n, err := strconv.ParseInt(rawUnits, 10, 64)
		if err != nil || n <= 0 || strings.TrimLeft(rawUnits, "0123456789") != "" {
			web.Error(w, http.StatusBadRequest, "invalid_amount", "amount_units must be a positive whole number of base units (1 USDT = 1000000), such as 5000000 for 5 USDT")
			return 0, false
		}
		amount, unit = money.Units(n), "base units"
	case rawUSDT != "":
		a, err := money.Parse(rawUSDT)
		if err != nil {
			web.Error(w, http.StatusBadRequest, "invalid_amount", "amount must be a positive USDT amount with at most 6 decimals, such as 10 or 2.5 (or send amount_units in base units)")
			return 0, false
		}
		amount, unit = a, "USDT"
	default:
		web.Error(w, http.StatusBadRequest, "missing_amount", "amount (whole USDT) or amount_units (base units) is required; the minimum deposit is "+minMsg)
		return 0, false
	}
	shown := rawUSDT
	if unit == "base units" {
		shown = rawUnits
	}
	switch {
	case amount < h.pay.MinDeposit:
		web.Error(w, http.StatusBadRequest, "below_minimum", fmt.Sprintf("amount %s %s is below the minimum deposit of %s", shown, unit, minMsg))
		return 0, false
	case amount > h.pay.MaxDeposit:
		hint := ""
		if unit == "USDT" {
			hint = "; amount is read as whole USDT — to give base units use amount_units"
		}
		web.Error(w, http.StatusBadRequest, "above_maximum", fmt.Sprintf("amount %s %s is above the maximum deposit of %s%s", shown, unit, maxMsg, hint))
		return 0, false
	}
	return amount, true
}
