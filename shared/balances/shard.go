package balances

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Sharding. A Redis Cluster runs a script only on keys of one hash slot, and
// one slot lives on one master. So that several masters share the writes,
// the hot metering keys are spread over a fixed number of shards, each its
// own hash tag, and everything one decision needs sits on one shard:
//
//   - a payer's shard (ShardOfPayer) holds its account (balance, rate,
//     calls of the day), its key lookup (a new key's secret is drawn until it
//     hashes to its account's shard, ShardOfKey), its x402 bundle and the
//     bundle keys drawing on it (both on the wallet's shard), its
//     batch-settlement channels (on the channel id's shard), the events its
//     calls produce (the shard's stream) and the shard's counters;
//   - an address's shard (ShardOfIP, by its /24 or IPv6 /48, so an address
//     and its subnet are counted in one script) holds its free-tier counters,
//     its request rate and its key-creation log.
//
// A request whose payer and address are on different shards sends the two
// scripts at once (one round trip: go-redis sends commands for different
// masters in parallel); see shared/meter for how their outcomes combine.
//
// Shard i's keys are Prefix + "{" + Tag(i) + "}:" + the unsharded shape;
// Redis hashes only the first {…}, so the names' own tags (acct:{id}) no
// longer decide the slot. Tag(i) is chosen so its slot lies in the middle of
// the i-th N-th of the 16384 slots: a cluster whose masters hold equal slot
// ranges (what `redis-cli --cluster create` makes) carries an equal number
// of shards on each master when N is a multiple of the masters' count.
//
// One shard (Shards 0 or 1) is the layout from before sharding: no tag is
// added, so a single-slot deployment ("{tollgate}:" on a cluster,
// "tollgate:" on one Redis) keeps its keys. A single Redis may run any
// number of shards (it accepts every slot); the scripts and names are the
// same as on a cluster.

// MaxShards bounds the shard count: each shard's tag must find a slot in
// the middle half of its 16384/N slots.
const MaxShards = 1024

// N is the number of shards (at least 1).
func (l Layout) N() int {
	if l.Shards < 1 {
		return 1
	}
	return l.Shards
}

// Sharded reports whether keys carry a shard tag (Shards > 1).
func (l Layout) Sharded() bool { return l.Shards > 1 }

// Shard is the single-shard layout of shard i: its Prefix is the prefix of
// every key on that shard. For an unsharded layout it is l itself.
func (l Layout) Shard(i int) Layout {
	if !l.Sharded() {
		return Layout{Prefix: l.Prefix}
	}
	return Layout{Prefix: l.Prefix + "{" + Tag(i, l.Shards) + "}:"}
}

// ShardPrefixes is every shard's key prefix, in shard order.
func (l Layout) ShardPrefixes() []string {
	out := make([]string, l.N())
	for i := range out {
		out[i] = l.Shard(i).Prefix
	}
	return out
}

// ShardOfPayer is the shard of a payer: an account id (key_…), a wallet
// (lower-case 0x hex, for its bundle and bundle keys) or a batch-settlement
// channel id. It is FNV-1a of the id modulo N, fixed forever for a given N.
func (l Layout) ShardOfPayer(id string) int { return l.of(id) }

// ShardOfKey is the shard an API key's lookup record (KeyLookup) is on, from
// the hex SHA-256 the gateway computes of the secret. Keys are created so
// that it is their account's home shard (see HomeOfAccount); an account
// migrated from an unsharded layout may have its home elsewhere, and then
// its key's shard holds a pointer to it (KeyPointer).
func (l Layout) ShardOfKey(sha256hex string) int { return l.of(sha256hex) }

// ShardOfIP is the shard of a free-tier subject (shared/meter.Subjects): an
// IPv4 address or /24, an IPv6 /64 or /48. The shard follows the /24 (IPv6:
// the /48), so an address and its subnet are counted by one script.
func (l Layout) ShardOfIP(subject string) int {
	if !l.Sharded() {
		return 0
	}
	return l.of(SubnetOf(subject))
}

// HomeOfAccount is an account's home shard: its wallet's for a bundle key
// (wallet != ""), its id's otherwise.
func (l Layout) HomeOfAccount(id, wallet string) int {
	if wallet != "" {
		return l.ShardOfPayer(wallet)
	}
	return l.ShardOfPayer(id)
}

// KeyPointerPrefix starts the value of a key lookup record that points to the
// account's home shard instead of naming the account: "@<shard>". Only an
// account migrated from an unsharded layout, whose key hashes to another
// shard than its id, has one; its home shard holds the real lookup record
// (key hash → id) too. The metering scripts answer such a pointer with
// the shard, and the gateway asks there (and remembers it).
const KeyPointerPrefix = "@"

// KeyPointer is the lookup value pointing to shard home.
func KeyPointer(home int) string { return KeyPointerPrefix + strconv.Itoa(home) }

// KeyRecords are the key lookup records (Redis key → value) an API key of
// account id needs: the lookup on the account's home shard and, when the
// key hashes to another shard, a pointer there. wallet is a bundle key's
// wallet ("" for any other key). Reconcile writes these when it rebuilds.
func (l Layout) KeyRecords(sha256hex, id, wallet string) map[string]string {
	home := l.HomeOfAccount(id, wallet)
	out := map[string]string{l.Shard(home).Prefix + "key:" + sha256hex: id}
	if s := l.ShardOfKey(sha256hex); s != home {
		out[l.KeyLookup(sha256hex)] = KeyPointer(home)
	}
	return out
}

func (l Layout) of(id string) int {
	if !l.Sharded() {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % uint32(l.Shards))
}

// SubnetOf maps a free-tier subject to the subnet its shard follows: an
// IPv4 address or /24 to its /24, an IPv6 /64 or /48 to its /48; anything
// else (the shared "invalid" bucket) to itself.
func SubnetOf(subject string) string {
	p, err := netip.ParsePrefix(subject)
	if err != nil {
		return subject
	}
	bits := 48
	if p.Addr().Is4() {
		bits = 24
	}
	if p.Bits() < bits {
		return p.Masked().String()
	}
	q, err := p.Addr().Prefix(bits)
	if err != nil {
		return subject
	}
	return q.String()
}

// Tag is the hash tag of shard i of n: "s<i>" or, when that slot is not in
// the middle half of the shard's slot range, "s<i>.<k>" for the smallest k
// whose slot is.
func Tag(i, n int) string {
	if n <= 1 {
		return ""
	}
	tags := tagsOf(n)
	if i < 0 || i >= len(tags) {
		panic(fmt.Sprintf("balances: shard %d of %d", i, n))
	}
	return tags[i]
}

var tagCache sync.Map // n → []string

func tagsOf(n int) []string {
	if v, ok := tagCache.Load(n); ok {
		return v.([]string)
	}
	tags := make([]string, n)
	for i := range tags {
		lo, hi := i*Slots/n, (i+1)*Slots/n
		w := hi - lo
		lo, hi = lo+w/4, hi-w/4
		if hi <= lo {
			hi = lo + 1
		}
		for k := 0; ; k++ {
			t := "s" + strconv.Itoa(i)
			if k > 0 {
				t += "." + strconv.Itoa(k)
			}
			if s := Slot(t); s >= lo && s < hi {
				tags[i] = t
				break
			}
		}
	}
	v, _ := tagCache.LoadOrStore(n, tags)
	return v.([]string)
}

// Slots is the number of Redis Cluster hash slots.
const Slots = 16384

// Slot is the Redis Cluster hash slot of a key: CRC16 (XMODEM) of its hash
// tag, or of the whole key when it has none, modulo 16384.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % Slots
}

// Validate checks a layout before use: the shard count in range and, when
// sharded, a prefix without a hash tag (it would put every shard in one
// slot).
func (l Layout) Validate() error {
	if l.Shards < 0 || l.Shards > MaxShards {
		return fmt.Errorf("balances: %d shards is outside 1..%d", l.Shards, MaxShards)
	}
	if l.Sharded() && HasHashTag(l.Prefix) {
		return fmt.Errorf("balances: with %d shards the key prefix %q must not contain a hash tag "+
			"(it would put every shard in one slot); use a plain prefix such as \"tollgate:\"", l.Shards, l.Prefix)
	}
	return nil
}

// LayoutRecord is the key recording the shard count a deployment's Redis is
// laid out for: "<prefix>layout", value "shards=<N>". The gateway and
// settlementd both check it at start (CheckLayout), so a gateway configured
// with another shard count than settlementd (TOLLGATE_REDIS_SHARDS) or than
// the keys already in Redis refuses to start instead of metering payers on
// shards nobody reads.
func (l Layout) LayoutRecord() string { return l.Prefix + "layout" }

// ErrLayoutMismatch is returned by CheckLayout when Redis is laid out for
// another shard count.
var ErrLayoutMismatch = errors.New("balances: Redis is laid out for another shard count")

// CheckLayout records l's shard count in Redis if none is recorded and
// otherwise compares it: a different count is ErrLayoutMismatch. Changing
// the count is a migration (docs: README "Operating"): delete the record,
// then rebuild with `settlementd reconcile -apply`.
func CheckLayout(ctx context.Context, rdb redis.Cmdable, l Layout) error {
	if err := l.Validate(); err != nil {
		return err
	}
	want := "shards=" + strconv.Itoa(l.N())
	got, err := rdb.SetArgs(ctx, l.LayoutRecord(), want, redis.SetArgs{Mode: "NX", Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return nil // recorded now
	}
	if err != nil {
		return fmt.Errorf("balances: layout record: %w", err)
	}
	if got != want {
		return fmt.Errorf("%w: %s holds %q, this process is configured for %q", ErrLayoutMismatch, l.LayoutRecord(), got, want)
	}
	return nil
}
