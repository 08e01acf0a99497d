package registry

import "testing"

func TestRoundTripAndServes(t *testing.T) {
	n := &Node{ID: "NODE-EU-WEST-ABCDEFGH", Wallet: "0xabc", Region: "eu-west", URL: "http://127.0.0.1:1", ChainIDs: []uint64{137, 1}, Status: StatusOnline}
	s, err := Encode(n)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(s)
	if err != nil || back.ID != n.ID || !back.Serves(137) || !back.Serves(1) || back.Serves(8453) {
		t.Fatalf("back = %+v, %v", back, err)
	}
	back.Status = StatusOffline
	if back.Serves(137) {
		t.Fatal("offline node serves")
	}
	// A quarantined record decodes (the gateway must not log it as
	// malformed) and serves nothing.
	n.Status = StatusQuarantined
	s, err = Encode(n)
	if err != nil {
		t.Fatal(err)
	}
	if back, err = Decode(s); err != nil || back.Status != StatusQuarantined || back.Serves(137) || back.Serves(1) {
		t.Fatalf("quarantined: %+v, %v", back, err)
	}
}

func TestRejects(t *testing.T) {
	for _, id := range []string{"", "NODE-EU-abcdefgh", "NODE-E-ABCDEFGH", "NODE-EU-ABCDEFG1", "node-EU-ABCDEFGH", "NODE-EU-ABCDEFGHI"} {
		if ValidID(id) {
			t.Errorf("ValidID(%q)", id)
		}
	}
	for _, s := range []string{"{", `{"id":"NODE-EU-ABCDEFGH"}`, `{"id":"NODE-EU-ABCDEFGH","url":"x","chain_ids":[1],"status":"maybe"}`,
		`{"id":"NODE-EU-ABCDEFGH","url":"x","chain_ids":[1],"status":"Quarantined"}`} {
		if _, err := Decode(s); err == nil {
			t.Errorf("Decode(%s) accepted", s)
		}
	}
}
