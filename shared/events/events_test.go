package events

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func sample() *Revenue {
	return &Revenue{ID: "01JABCDEF", TimeMs: 1_763_700_000_123, EpochID: 29_395_000, ChainID: 137, Method: "eth_call", Payer: PayerCredits,
		Account: "key_01JABC", Asset: AssetUSDT, Amount: 60, Calls: 2, Upstream: "NODE-EU-ABCDEFGH", NodeID: "NODE-EU-ABCDEFGH"}
}

// toValues mimics what go-redis hands back from XREADGROUP: every value a string.
func toValues(fields []any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(fields); i += 2 {
		m[fields[i].(string)] = fields[i+1]
	}
	return m
}

func TestRoundTrip(t *testing.T) {
	in := sample()
	fields, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(toValues(fields))
	if err != nil {
		t.Fatal(err)
	}
	if *out.(*Revenue) != *in {
		t.Fatalf("got %+v want %+v", out, in)
	}
	d := toValues(fields)["d"].(string)
	if !strings.Contains(d, `"amount_units":"60"`) {
		t.Fatalf("amount not a decimal string: %s", d)
	}
	if !strings.Contains(d, `"epoch_id":29395000`) || !strings.Contains(d, `"method":"eth_call"`) {
		t.Fatalf("epoch or method missing: %s", d)
	}
}

// TestDecodeOlderRevenue: entries written before epoch_id and method existed
// still decode; the epoch comes from ts and the method stays empty.
func TestDecodeOlderRevenue(t *testing.T) {
	old := `{"id":"01JOLD","ts":1763700000123,"chain_id":137,"payer":"credits","account":"key_01JABC",` +
		`"asset":"USDT","amount_units":"30","calls":1,"upstream":"alpha"}`
	e, err := Decode(map[string]any{"t": TypeRevenue, "v": Version, "d": old})
	if err != nil {
		t.Fatal(err)
	}
	r := e.(*Revenue)
	if r.EpochID != 29_395_000 || r.EpochID != EpochOf(r.Time()) || r.Method != "" || r.Amount != 30 || r.Upstream != "alpha" {
		t.Fatalf("old entry decoded as %+v", r)
	}
	// An explicit epoch_id is checked, not overwritten, even when it is 0.
	for _, d := range []string{
		strings.Replace(old, `"chain_id"`, `"epoch_id":29394999,"chain_id"`, 1),
		strings.Replace(old, `"chain_id"`, `"epoch_id":0,"chain_id"`, 1),
	} {
		if _, err := Decode(map[string]any{"t": TypeRevenue, "v": Version, "d": d}); err == nil {
			t.Errorf("mismatched epoch accepted: %s", d)
		}
	}
}

func TestValidate(t *testing.T) {
	bad := []func(*Revenue){
		func(r *Revenue) { r.ID = "" },
		func(r *Revenue) { r.Amount = -1 },
		func(r *Revenue) { r.Calls = 0 },
		func(r *Revenue) { r.Asset = "DAI" },
		func(r *Revenue) { r.Payer = "gift" },
		func(r *Revenue) { r.Account = "" },
		func(r *Revenue) { r.Payer = PayerFree }, // free with an amount
		func(r *Revenue) { r.ChainID = 0 },
		func(r *Revenue) { r.EpochID++ },                        // not the epoch of ts
		func(r *Revenue) { r.EpochID = 0 },                      // missing on a new event
		func(r *Revenue) { r.TimeMs += 60_000 },                 // ts moved to the next epoch
		func(r *Revenue) { r.Method = strings.Repeat("a", 65) }, // too long
		func(r *Revenue) { r.Method = "eth_call\x00" },          // not a label
		func(r *Revenue) { r.Method = "<script>" },              // not a label
	}
	for i, mut := range bad {
		r := sample()
		mut(r)
		if _, err := Encode(r); err == nil {
			t.Errorf("case %d: invalid event encoded", i)
		}
	}
	for _, m := range []string{"", "other", MethodBatch, "eth_getBlockByNumber", strings.Repeat("a", MaxMethodLen)} {
		r := sample()
		r.Method = m
		if _, err := Encode(r); err != nil {
			t.Errorf("method %q: %v", m, err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := []map[string]any{
		{"t": "revenue", "v": "2", "d": "{}"},
		{"t": "mystery", "v": "1", "d": "{}"},
	}
	for _, c := range cases {
		if _, err := Decode(c); !errors.Is(err, ErrUnknownType) {
			t.Errorf("Decode(%v) = %v; want ErrUnknownType", c, err)
		}
	}
	if _, err := Decode(map[string]any{"t": "revenue", "v": "1", "d": "{not json"}); err == nil {
		t.Error("bad json accepted")
	}
	if _, err := Decode(map[string]any{"t": "revenue", "v": "1", "d": `{"id":"x"}`}); err == nil {
		t.Error("incomplete event accepted")
	}
}

func TestEpochOf(t *testing.T) {
	for in, want := range map[int64]int64{0: 0, 59: 0, 60: 1, 119: 1, 1_763_700_000: 29_395_000, -1: -1, -60: -1, -61: -2} {
		if got := EpochOf(time.Unix(in, 0)); got != want {
			t.Errorf("EpochOf(%d) = %d; want %d", in, got, want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	fields, _ := Encode(sample())
	f.Add(toValues(fields)["d"].(string))
	f.Add(`{"id":"a","ts":1,"chain_id":1,"payer":"free","asset":"USDT","amount_units":"0","calls":1}`)
	f.Add(`{"id":"a","ts":60000,"epoch_id":1,"chain_id":1,"method":"batch","payer":"free","asset":"USDT","amount_units":"0","calls":1}`)
	f.Fuzz(func(t *testing.T, d string) {
		e, err := Decode(map[string]any{"t": TypeRevenue, "v": Version, "d": d})
		if err == nil {
			if verr := e.Validate(); verr != nil {
				t.Fatalf("decoded an invalid event: %v", verr)
			}
		}
	})
}

func TestLedgerEventsRoundTrip(t *testing.T) {
	const wallet = "0x00000000000000000000000000000000a11e7000"
	evs := []Event{
		&Debit{ID: "r1", TimeMs: 1, ChainID: 137, Payer: PayerCredits, Account: "key_x", Asset: AssetUSDT, Amount: 90, Calls: 3},
		&Refund{ID: "r1", TimeMs: 2, Payer: PayerCredits, Account: "key_x", Amount: 30, Calls: 1},
		&KeyCreated{KeyID: "key_x", KeyHash: strings.Repeat("ab", 32), Kind: KeyMachine, Label: "bot", Tier: "free", TimeMs: 3},
		&KeyRevoked{KeyID: "key_x", TimeMs: 4},
		&BundleGranted{ID: "0xabc", Wallet: "0x1", Calls: 1000, Amount: 100000, Network: "eip155:8453", TimeMs: 5},
		&Debit{ID: "r2", TimeMs: 6, ChainID: 8453, Payer: PayerChannel, Account: wallet, Asset: AssetUSDC, Amount: 100, Calls: 1},
		// A draw voided after a lost Redis reply goes back to its channel.
		&Refund{ID: "r2", TimeMs: 7, Payer: PayerChannel, Account: wallet, Amount: 100, Calls: 1},
	}
	for _, e := range evs {
		f, err := Encode(e)
		if err != nil {
			t.Fatalf("%s: %v", e.EventType(), err)
		}
		back, err := Decode(toValues(f))
		if err != nil || back.EventID() != e.EventID() || back.EventType() != e.EventType() {
			t.Fatalf("%s: %v %v", e.EventType(), back, err)
		}
	}
	bad := []Event{
		&Debit{ID: "r1", TimeMs: 1, ChainID: 137, Payer: PayerFree, Asset: AssetUSDT, Amount: 30, Calls: 1},
		&Refund{ID: "r1", TimeMs: 1, Payer: PayerCredits, Amount: 30, Calls: 1},
		&KeyCreated{KeyID: "key_x", KeyHash: "short", Kind: KeyAPI, TimeMs: 1},
		&BundleGranted{ID: "0xabc", Wallet: "0x1", Calls: 0, Amount: 1, TimeMs: 1},
		// A channel draw is a wallet's; a Revenue is never the channel's.
		&Debit{ID: "r2", TimeMs: 6, ChainID: 8453, Payer: PayerChannel, Account: "key_x", Asset: AssetUSDC, Amount: 100, Calls: 1},
		&Refund{ID: "r2", TimeMs: 7, Payer: PayerChannel, Account: "key_x", Amount: 100, Calls: 1},
		&Revenue{ID: "r2", TimeMs: 60_000, EpochID: 1, ChainID: 8453, Method: "eth_call", Payer: PayerChannel, Account: wallet,
			Asset: AssetUSDC, Amount: 100, Calls: 1, Upstream: "cache"},
	}
	for _, e := range bad {
		if _, err := Encode(e); err == nil {
			t.Errorf("%s: invalid event encoded: %+v", e.EventType(), e)
		}
	}
}
