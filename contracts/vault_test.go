package contracts

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgate-rpc/tollgate/contracts/bindings/revenuevault"
)

var testAccountID = common.HexToHash("0x7e57000000000000000000000000000000000000000000000000000000000001")

func (e *polygonEnv) approveVault(from *account, amount int64) {
	e.mintUSDT(from.addr, amount)
	mustSend(e.t, e.chain, from, e.usdtC, e.usdt.PackApprove(e.addrs.Vault, big.NewInt(amount)))
}

func TestVaultDepositBelowMinimumReverts(t *testing.T) {
	e := newPolygonEnv(t)
	e.approveVault(e.user, minDeposit)
	_, err := send(t, e.chain, e.user, e.vaultC, e.vault.PackDeposit(big.NewInt(minDeposit-1), testAccountID))
	got := expectRevert[revenuevault.RevenueVaultDepositBelowMinimum](t, err, e.vault.UnpackError)
	if got.Amount.Int64() != minDeposit-1 || got.Minimum.Int64() != minDeposit {
		t.Fatalf("DepositBelowMinimum(%v, %v), want (%d, %d)", got.Amount, got.Minimum, minDeposit-1, minDeposit)
	}
}

func TestVaultDepositAtMinimum(t *testing.T) {
	e := newPolygonEnv(t)
	e.approveVault(e.user, minDeposit)
	before := e.usdtBalance(e.treasury.addr)
	r := mustSend(t, e.chain, e.user, e.vaultC, e.vault.PackDeposit(big.NewInt(minDeposit), testAccountID))

	var found int
	for _, l := range r.Logs {
		if l.Address != e.addrs.Vault {
			continue
		}
		ev, err := e.vault.UnpackDepositedEvent(l)
		if err != nil {
			continue
		}
		found++
		if ev.Account != testAccountID || ev.From != e.user.addr || ev.Amount.Int64() != minDeposit {
			t.Fatalf("Deposited{account %x, from %s, amount %v}, want {%x, %s, %d}",
				ev.Account, ev.From, ev.Amount, testAccountID, e.user.addr, minDeposit)
		}
	}
	if found != 1 {
		t.Fatalf("found %d Deposited events, want 1", found)
	}
	if delta := new(big.Int).Sub(e.usdtBalance(e.treasury.addr), before); delta.Int64() != minDeposit {
		t.Fatalf("treasury received %v, want %d", delta, minDeposit)
	}
	if bal := e.usdtBalance(e.addrs.Vault); bal.Sign() != 0 {
		t.Fatalf("vault holds %v, want 0", bal)
	}
}

func TestVaultDepositZeroAccountReverts(t *testing.T) {
	e := newPolygonEnv(t)
	e.approveVault(e.user, minDeposit)
	_, err := send(t, e.chain, e.user, e.vaultC, e.vault.PackDeposit(big.NewInt(minDeposit), [32]byte{}))
	expectRevert[revenuevault.RevenueVaultInvalidAccount](t, err, e.vault.UnpackError)
}

func TestVaultOwnerSetters(t *testing.T) {
	e := newPolygonEnv(t)
	owner := call(t, e.vaultC, e.vault.PackOwner(), e.vault.UnpackOwner)
	if owner != e.deployer.addr {
		t.Fatalf("owner %s, want deployer %s", owner, e.deployer.addr)
	}
	_, err := send(t, e.chain, e.other, e.vaultC, e.vault.PackSetMinDeposit(big.NewInt(1)))
	if got := expectRevert[revenuevault.RevenueVaultOwnableUnauthorizedAccount](t, err, e.vault.UnpackError); got.Account != e.other.addr {
		t.Fatalf("OwnableUnauthorizedAccount(%s), want %s", got.Account, e.other.addr)
	}
	_, err = send(t, e.chain, e.deployer, e.vaultC, e.vault.PackSetTreasury(common.Address{}))
	expectRevert[revenuevault.RevenueVaultZeroAddress](t, err, e.vault.UnpackError)

	mustSend(t, e.chain, e.deployer, e.vaultC, e.vault.PackSetMinDeposit(big.NewInt(5)))
	mustSend(t, e.chain, e.deployer, e.vaultC, e.vault.PackSetTreasury(e.other.addr))
	if v := call(t, e.vaultC, e.vault.PackMinDeposit(), e.vault.UnpackMinDeposit); v.Int64() != 5 {
		t.Fatalf("minDeposit %v, want 5", v)
	}
	if v := call(t, e.vaultC, e.vault.PackTreasury(), e.vault.UnpackTreasury); v != e.other.addr {
		t.Fatalf("treasury %s, want %s", v, e.other.addr)
	}
	if v := call(t, e.vaultC, e.vault.PackUsdt(), e.vault.UnpackUsdt); v != e.addrs.USDT {
		t.Fatalf("usdt %s, want %s", v, e.addrs.USDT)
	}
}
