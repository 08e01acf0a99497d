package balances_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
	"github.com/tollgate-rpc/tollgate/shared/balances"
)

// Slot must agree with Redis Cluster's key hashing (the CRC16 check value of
// "123456789" is 0x31C3; "{user1000}.following" hashes only "user1000").
func TestSlotMatchesRedisCluster(t *testing.T) {
	for key, want := range map[string]int{"123456789": 0x31C3, "foo": 12182, "{user1000}.following": balances.Slot("user1000"),
		"{}x": balances.Slot("{}x")} {
		if got := balances.Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}

// Every shard's tag lands in the middle half of its share of the slots, so
// masters holding equal slot ranges carry equal numbers of shards.
func TestShardTagsSpreadOverSlots(t *testing.T) {
	for _, n := range []int{2, 3, 4, 6, 12, 64, balances.MaxShards} {
		seen := map[string]bool{}
		for i := 0; i < n; i++ {
			tag := balances.Tag(i, n)
			s := balances.Slot(tag)
			lo, hi := i*balances.Slots/n, (i+1)*balances.Slots/n
			if s < lo || s >= hi {
				t.Fatalf("n=%d shard %d: tag %q slot %d outside [%d,%d)", n, i, tag, s, lo, hi)
			}
			if seen[tag] {
				t.Fatalf("n=%d: tag %q twice", n, tag)
			}
			seen[tag] = true
		}
	}
	// Three masters as redis-cli --cluster create splits the slots.
	l := balances.Layout{Prefix: "tollgate:", Shards: 12}
	perMaster := [3]int{}
	for _, p := range l.ShardPrefixes() {
		perMaster[balances.Slot(p+"events")*3/balances.Slots]++
	}
	if perMaster != [3]int{4, 4, 4} {
		t.Fatalf("12 shards over 3 masters: %v", perMaster)
	}
}

func TestUnshardedLayoutKeepsItsKeys(t *testing.T) {
	for _, shards := range []int{0, 1} {
		l := balances.Layout{Prefix: "{tollgate}:", Shards: shards}
		if l.Stream(0) != "{tollgate}:events" || l.Account("key_x") != "{tollgate}:acct:{key_x}" ||
			l.KeyLookup("ab") != "{tollgate}:key:ab" || l.FreeIP("d", "1.2.3.4/32") != "{tollgate}:free:d:ip:1.2.3.4/32" ||
			len(l.Streams()) != 1 || l.ShardOfPayer("key_x") != 0 || l.ShardOfIP("1.2.3.4/32") != 0 {
			t.Fatalf("shards=%d changed the unsharded names", shards)
		}
	}
}

// Payers and addresses spread over every shard, and each key lands on the
// shard its owner's method says.
func TestPayersSpreadOverShards(t *testing.T) {
	l := balances.Layout{Prefix: "tollgate:", Shards: 6}
	hits := make([]int, l.N())
	for i := 0; i < 6000; i++ {
		id := fmt.Sprintf("key_%026d", i)
		s := l.ShardOfPayer(id)
		hits[s]++
		if got := l.Account(id); balances.Slot(got) != balances.Slot(l.Stream(s)) {
			t.Fatalf("account %s not on its shard's slot", id)
		}
	}
	for s, n := range hits {
		if n < 800 || n > 1200 {
			t.Fatalf("shard %d got %d of 6000 payers: %v", s, n, hits)
		}
	}
	// An address and its /24 (IPv6: /64 and /48) are on one shard.
	for _, pair := range [][2]string{{"10.1.2.3/32", "10.1.2.0/24"}, {"2001:db8:1:2::/64", "2001:db8:1::/48"}} {
		if balances.Slot(l.FreeIP("d", pair[0])) != balances.Slot(l.FreeNet("d", pair[1])) ||
			balances.Slot(l.IPRate(pair[0])) != balances.Slot(l.FreeNet("d", pair[1])) {
			t.Fatalf("%v split over shards", pair)
		}
	}
	// A migrated key whose hash falls on another shard than its account
	// gets a pointer there.
	recs := l.KeyRecords("00ff", "key_1", "")
	home := l.HomeOfAccount("key_1", "")
	if recs[l.Shard(home).Prefix+"key:00ff"] != "key_1" {
		t.Fatalf("no lookup on the home shard: %v", recs)
	}
	if s := l.ShardOfKey("00ff"); s != home && recs[l.KeyLookup("00ff")] != balances.KeyPointer(home) {
		t.Fatalf("no pointer on the key's shard: %v", recs)
	}
}

func TestLayoutValidateAndRecord(t *testing.T) {
	if err := (balances.Layout{Prefix: "{t}:", Shards: 3}).Validate(); err == nil {
		t.Fatal("a hash-tagged prefix with 3 shards was accepted")
	}
	if err := (balances.Layout{Prefix: "t:", Shards: balances.MaxShards + 1}).Validate(); err == nil {
		t.Fatal("too many shards accepted")
	}
	rdb := testenv.Redis(t)
	prefix := testenv.KeyPrefix(t)
	ctx := context.Background()
	if err := balances.CheckLayout(ctx, rdb, balances.Layout{Prefix: prefix, Shards: 4}); err != nil {
		t.Fatal(err)
	}
	if err := balances.CheckLayout(ctx, rdb, balances.Layout{Prefix: prefix, Shards: 4}); err != nil {
		t.Fatal(err)
	}
	if err := balances.CheckLayout(ctx, rdb, balances.Layout{Prefix: prefix, Shards: 1}); !errors.Is(err, balances.ErrLayoutMismatch) {
		t.Fatalf("a 1-shard process on a 4-shard Redis: %v", err)
	}
}
