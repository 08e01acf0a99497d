package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate-rpc/tollgate/shared/events"
)

// The stream read of the hot path. go-redis's XReadGroup
// builds a map[string]interface{} and three boxed strings per entry: with
// thousands of entries per read that was a quarter of the ingester's CPU
// and about half its allocations in the profile, for three short fields the
// decoder reads once. Instead the reply is taken as raw RESP
// (redis.RawWriteToCmd into a reused buffer), copied into one string, and parsed here into entries whose
// id and fields are substrings of it: a few allocations per read, not a
// dozen per entry. Both reply shapes are read: RESP2 (an array of
// [stream, entries]) and RESP3 (a map of stream → entries).

// entry is one stream entry as the ingester reads it.
type entry struct {
	id string
	// fields: name, value, name, value … as read from the stream; nil when
	// the entry was deleted from the stream before it was read (a pending
	// entry trimmed away: XREADGROUP returns its id without fields).
	fields []string
	// values: the entry as go-redis returns it (XAUTOCLAIM, tests), used
	// instead of fields when set.
	values map[string]any
}

// entriesOf wraps go-redis messages.
func entriesOf(msgs []redis.XMessage) []entry {
	out := make([]entry, len(msgs))
	for i, m := range msgs {
		out[i] = entry{id: m.ID, values: m.Values}
	}
	return out
}

// deleted: the entry's content is gone from the stream.
func (e entry) deleted() bool { return e.values == nil && e.fields == nil }

// field is the value of the field name ("" when absent); the last one wins,
// as in the map go-redis builds.
func (e entry) field(name string) string {
	v := ""
	for i := 0; i+1 < len(e.fields); i += 2 {
		if e.fields[i] == name {
			v = e.fields[i+1]
		}
	}
	return v
}

// appendEvents appends the entry's events to dst (events.AppendDecoded):
// one, or several for a packed entry; none on an error.
func (e entry) appendEvents(dst []events.Event) ([]events.Event, error) {
	if e.values != nil {
		evs, err := events.DecodeEntry(e.values)
		return append(dst, evs...), err
	}
	return events.AppendDecoded(dst, e.field("t"), e.field("v"), e.field("n"), e.field("d"))
}

// valueMap is the entry's fields as go-redis would have returned them (what
// a dead letter stores).
func (e entry) valueMap() map[string]any {
	if e.values != nil || e.fields == nil {
		return e.values
	}
	m := make(map[string]any, len(e.fields)/2)
	for i := 0; i+1 < len(e.fields); i += 2 {
		m[e.fields[i]] = e.fields[i+1]
	}
	return m
}

// xreadgroup reads up to n entries of stream after id for group/consumer,
// blocking up to block for new ones (negative: not at all).
func xreadgroup(ctx context.Context, rdb redis.UniversalClient, group, consumer, stream, id string, n int, block time.Duration) ([]entry, error) {
	args := []any{"XREADGROUP", "GROUP", group, consumer, "COUNT", n}
	if block >= 0 {
		// A raw command has the client's read timeout, not the BLOCK-aware one
		// go-redis gives XReadGroup: wait at most half of it, so the
		// server answers first (a shorter block only means one more empty
		// read while idle).
		var rt time.Duration
		switch c := rdb.(type) {
		case interface{ Options() *redis.Options }:
			rt = c.Options().ReadTimeout
		case interface{ Options() *redis.ClusterOptions }:
			rt = c.Options().ReadTimeout
		}
		if rt > 0 && block > rt/2 {
			block = rt / 2
		}
		args = append(args, "BLOCK", block.Milliseconds())
	}
	args = append(args, "STREAMS", stream, id)
	buf := replyBufs.Get().(*bytes.Buffer)
	defer replyBufs.Put(buf)
	buf.Reset()
	cmd := redis.NewRawWriteToCmd(ctx, buf, args...)
	// The stream key, for a cluster client's routing (the typed
	// XReadGroup sets it too).
	cmd.SetFirstKeyPos(int8(len(args) - 2))
	if err := rdb.Process(ctx, cmd); err != nil {
		return nil, err
	}
	return parseXRead(buf.String())
}

// replyBufs recycles the buffers raw replies are written to (hundreds of
// kB; grown by append for every read, they cost more than the parse).
var replyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// errReply is an error reply of the server (NOGROUP …).
type errReply string

func (e errReply) Error() string { return string(e) }

// resp reads RESP from s.
type resp struct {
	s string
	i int
}

var errShortReply = errors.New("ingest: truncated XREADGROUP reply")

// header reads a type byte and its number ("*3", "$12", "%1", "_"); n is -1
// for a null. An error reply is returned as the error.
func (r *resp) header() (kind byte, n int, err error) {
	end := strings.Index(r.s[r.i:], "\r\n")
	if end < 1 {
		return 0, 0, errShortReply
	}
	line := r.s[r.i : r.i+end]
	r.i += end + 2
	kind = line[0]
	switch kind {
	case '-':
		return 0, 0, errReply(line[1:])
	case '_':
		return kind, -1, nil
	case '*', '%', '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return 0, 0, fmt.Errorf("ingest: XREADGROUP reply: bad length %q", line)
		}
		return kind, n, nil
	}
	return 0, 0, fmt.Errorf("ingest: XREADGROUP reply: unexpected %q", line)
}

// bulk reads a bulk string.
func (r *resp) bulk() (string, error) {
	kind, n, err := r.header()
	if err != nil {
		return "", err
	}
	if kind != '$' || n < 0 {
		return "", fmt.Errorf("ingest: XREADGROUP reply: %q where a string was expected", kind)
	}
	if r.i+n+2 > len(r.s) || r.s[r.i+n:r.i+n+2] != "\r\n" {
		return "", errShortReply
	}
	v := r.s[r.i : r.i+n]
	r.i += n + 2
	return v, nil
}

// parseXRead parses an XREADGROUP reply: its entries, in stream order.
func parseXRead(s string) ([]entry, error) {
	r := &resp{s: s}
	kind, streams, err := r.header()
	if err != nil {
		return nil, err
	}
	switch {
	case streams < 0: // nothing new before the BLOCK ran out
		return nil, nil
	case kind != '*' && kind != '%':
		return nil, fmt.Errorf("ingest: XREADGROUP reply: %q at the top", kind)
	}
	var out []entry
	for range streams {
		if kind == '*' { // RESP2: [stream, entries]
			if k, n, err := r.header(); err != nil || k != '*' || n != 2 {
				return nil, errors.Join(err, errors.New("ingest: XREADGROUP reply: bad stream"))
			}
		}
		if _, err := r.bulk(); err != nil { // the stream's name
			return nil, err
		}
		k, n, err := r.header()
		if err != nil {
			return nil, err
		}
		if k != '*' || n < 0 {
			continue
		}
		// One array for every entry's fields (three pairs each), so an
		// entry costs no allocation of its own.
		fields := make([]string, 0, 6*n)
		if out == nil {
			out = make([]entry, 0, n)
		}
		for range n {
			if k, m, err := r.header(); err != nil || k != '*' || m != 2 {
				return nil, errors.Join(err, errors.New("ingest: XREADGROUP reply: bad entry"))
			}
			id, err := r.bulk()
			if err != nil {
				return nil, err
			}
			k, m, err := r.header()
			if err != nil {
				return nil, err
			}
			if m < 0 { // deleted from the stream: no fields
				out = append(out, entry{id: id})
				continue
			}
			if k != '*' {
				return nil, fmt.Errorf("ingest: XREADGROUP reply: %q for an entry's fields", k)
			}
			start := len(fields)
			for range m {
				v, err := r.bulk()
				if err != nil {
					return nil, err
				}
				fields = append(fields, v)
			}
			out = append(out, entry{id: id, fields: fields[start:len(fields):len(fields)]})
		}
	}
	return out, nil
}
