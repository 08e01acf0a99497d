package accounts

import (
	"errors"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	id := NewID()
	if len(id) != 30 {
		t.Fatalf("id %q has length %d", id, len(id))
	}
	b, err := ToBytes32(id)
	if err != nil {
		t.Fatal(err)
	}
	if b[29] == 0 || b[30] != 0 || b[31] != 0 {
		t.Fatalf("layout %x", b)
	}
	back, err := FromBytes32(b)
	if err != nil || back != id {
		t.Fatalf("FromBytes32 = %q, %v; want %q", back, err, id)
	}
}

func TestRejects(t *testing.T) {
	for _, id := range []string{"", "key_", "01JABCDEFGHJKMNPQRSTVWXYZ0", "key_01jabcdefghjkmnpqrstvwxyz0",
		"key_01JABCDEFGHJKMNPQRSTVWXYZ", "key_01JABCDEFGHJKMNPQRSTVWXYZ00", "key_01JDEMO0000000000000000000", "tok_01JABCDEFGHJKMNPQRSTVWXYZ0"} {
		if _, err := ToBytes32(id); !errors.Is(err, ErrInvalid) {
			t.Errorf("ToBytes32(%q) err = %v", id, err)
		}
	}
	var b [32]byte
	copy(b[:], "key_01JABCDEFGHJKMNPQRSTVWXYZ0")
	b[31] = 1
	if _, err := FromBytes32(b); err == nil {
		t.Error("trailing garbage accepted")
	}
	if _, err := FromBytes32([32]byte{}); err == nil {
		t.Error("zero account accepted")
	}
}
