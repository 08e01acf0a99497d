package relay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/tollgate-rpc/tollgate/caddymodule/evm"
	"github.com/tollgate-rpc/tollgate/caddymodule/jsonrpc"
	"github.com/tollgate-rpc/tollgate/caddymodule/upstream"
)

// Filters (eth_newFilter and friends) live on the upstream that created
// them: asked of another, eth_getFilterChanges finds no such filter — or, by
// chance, another caller's. So the filter id a caller gets carries its
// upstream: "0x" + 8 hex of the upstream name's SHA-256 + the upstream's own
// id. Any gateway of the same configuration can route it back, without
// shared state; a forged or stale id gets the answer a node gives for an
// unknown filter, never another node's.

const filterTagLen = 8 // hex characters

func filterTag(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:filterTagLen/2])
}

// filterNotFound is geth's own answer for an unknown filter id.
func filterNotFound(it *jsonrpc.Item) jsonrpc.Reply {
	return jsonrpc.Reply{Response: jsonrpc.ErrorResponse(it.ResponseID(), &jsonrpc.Error{Code: -32000, Message: "filter not found"})}
}

// forwardCalls forwards the calls the cache could not answer: the sticky
// ones (a filter id in params[0]) each to the upstream its id names and no
// other, the rest as forwardUpstream does; the filter ids new filters get
// are tagged with the upstream that created them. Replies, and who served
// each call, come back in the calls' order.
func (h *Relay) forwardCalls(ctx context.Context, cs *Chain, calls []jsonrpc.Item) ([]jsonrpc.Reply, []upstream.Ref, bool) {
	var sticky []int
	for k := range calls {
		if cs.methods.Lookup(calls[k].Method).Sticky {
			sticky = append(sticky, k)
		}
	}
	if len(sticky) == 0 {
		replies, refs, relayed := h.forwardUpstream(ctx, cs, calls)
		tagNewFilters(calls, replies, refs)
		return replies, refs, relayed
	}
	replies := make([]jsonrpc.Reply, len(calls))
	refs := make([]upstream.Ref, len(calls))
	rest := make([]jsonrpc.Item, 0, len(calls)-len(sticky))
	restAt := make([]int, 0, len(calls)-len(sticky))
	isSticky := make(map[int]bool, len(sticky))
	for _, k := range sticky {
		isSticky[k] = true
	}
	for k := range calls {
		if !isSticky[k] {
			rest, restAt = append(rest, calls[k]), append(restAt, k)
		}
	}
	relayed := false
	if len(rest) > 0 {
		r, rr, rel := h.forwardUpstream(ctx, cs, rest)
		relayed = rel
		tagNewFilters(rest, r, rr)
		for i, k := range restAt {
			replies[k], refs[k] = r[i], rr[i]
		}
	}
	tags := map[string]string{} // tag → upstream name, of this pool now
	for _, u := range cs.pool.Snapshot().Upstreams {
		tags[filterTag(u.Name)] = u.Name
	}
	for _, k := range sticky {
		it := calls[k]
		name, orig, ok := untagParams(it.Params, tags)
		if !ok {
			replies[k] = filterNotFound(&it)
			continue
		}
		it.Params = orig
		r, sref, rel := h.forwardPart(ctx, cs, []jsonrpc.Item{it}, "", name)
		replies[k], refs[k] = r[0], sref[0]
		relayed = relayed || rel
	}
	return replies, refs, relayed
}

// untagParams reads ["0x<tag><id>", …] and returns the upstream the tag
// names and the params with the upstream's own id.
func untagParams(params json.RawMessage, tags map[string]string) (string, json.RawMessage, bool) {
	var p []json.RawMessage
	if json.Unmarshal(params, &p) != nil || len(p) == 0 {
		return "", nil, false
	}
	var id string
	if json.Unmarshal(p[0], &id) != nil || !strings.HasPrefix(id, "0x") || len(id) <= 2+filterTagLen {
		return "", nil, false
	}
	name, known := tags[strings.ToLower(id[2:2+filterTagLen])]
	if !known {
		return "", nil, false
	}
	orig, _ := json.Marshal("0x" + id[2+filterTagLen:])
	p[0] = orig
	out, err := json.Marshal(p)
	return name, out, err == nil
}

// tagNewFilters rewrites the ids of new filters with the upstream that
// created each (refs[k] served call k).
func tagNewFilters(calls []jsonrpc.Item, replies []jsonrpc.Reply, refs []upstream.Ref) {
	for k := range calls {
		if !evm.Lookup(calls[k].Method).CreatesFilter || replies[k].Err != nil || replies[k].Error != nil || refs[k].Name == "" {
			continue
		}
		ref := refs[k]
		var id string
		if json.Unmarshal(replies[k].Result, &id) != nil || !strings.HasPrefix(id, "0x") || len(id) < 3 {
			continue
		}
		tagged, _ := json.Marshal("0x" + filterTag(ref.Name) + id[2:])
		replies[k].Result = tagged
	}
}
