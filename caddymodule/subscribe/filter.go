package subscribe

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Filter limits: a filter is part of a map key and is sent upstream, so its
// size is bounded.
const (
	maxFilterAddresses = 1000
	maxTopicPositions  = 4
	maxTopicsPerPos    = 1000
)

// logFilter is the canonical form of an eth_subscribe "logs" filter: the
// same filter spelled differently (address as a string or a one-element
// list, upper or lower case hex, topics in another order within a position,
// trailing null positions) gives the same bytes and so the same upstream
// subscription.
type logFilter struct {
	Address []string   `json:"address,omitempty"`
	Topics  [][]string `json:"topics,omitempty"` // nil position: any topic
}

// canonicalFilter checks params (the logs filter object, or nil/null for
// every log) and returns its canonical JSON.
func canonicalFilter(params json.RawMessage) ([]byte, error) {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		return []byte("{}"), nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(params, &raw); err != nil {
		return nil, fmt.Errorf("%w: the logs filter must be an object", ErrBadFilter)
	}
	var f logFilter
	for k, v := range raw {
		switch k {
		case "address":
			addrs, err := hexList(v, 20, maxFilterAddresses)
			if err != nil {
				return nil, fmt.Errorf("%w: address: %v", ErrBadFilter, err)
			}
			f.Address = addrs
		case "topics":
			var pos []json.RawMessage
			if err := json.Unmarshal(v, &pos); err != nil && string(bytes.TrimSpace(v)) != "null" {
				return nil, fmt.Errorf("%w: topics must be a list", ErrBadFilter)
			}
			if len(pos) > maxTopicPositions {
				return nil, fmt.Errorf("%w: at most %d topic positions", ErrBadFilter, maxTopicPositions)
			}
			for i, p := range pos {
				ts, err := hexList(p, 32, maxTopicsPerPos)
				if err != nil {
					return nil, fmt.Errorf("%w: topics[%d]: %v", ErrBadFilter, i, err)
				}
				f.Topics = append(f.Topics, ts)
			}
			for len(f.Topics) > 0 && f.Topics[len(f.Topics)-1] == nil {
				f.Topics = f.Topics[:len(f.Topics)-1]
			}
		default:
			// fromBlock/toBlock/blockHash make no sense for a live feed.
			return nil, fmt.Errorf("%w: unsupported field %q (a logs subscription takes address and topics)", ErrBadFilter, truncate(k, 32))
		}
	}
	return json.Marshal(f)
}

// hexList reads null, one hex string or a list of them, each of n bytes;
// nil means "any". The result is lower case, sorted and without repeats.
func hexList(v json.RawMessage, n, limit int) ([]string, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	var list []string
	if v[0] == '"' {
		var one string
		if err := json.Unmarshal(v, &one); err != nil {
			return nil, err
		}
		list = []string{one}
	} else if err := json.Unmarshal(v, &list); err != nil {
		return nil, fmt.Errorf("want a hex string, a list of them or null")
	}
	if len(list) == 0 {
		return nil, nil // [] matches anything, like null
	}
	if len(list) > limit {
		return nil, fmt.Errorf("at most %d values", limit)
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		s = strings.ToLower(s)
		if !strings.HasPrefix(s, "0x") || len(s) != 2+2*n {
			return nil, fmt.Errorf("%q is not 0x and %d hex bytes", truncate(s, 70), n)
		}
		if _, err := hex.DecodeString(s[2:]); err != nil {
			return nil, fmt.Errorf("%q is not hex", truncate(s, 70))
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// MarshalJSON writes topic positions as null (any) or a list.
func (f logFilter) MarshalJSON() ([]byte, error) {
	type plain struct {
		Address []string `json:"address,omitempty"`
		Topics  []any    `json:"topics,omitempty"`
	}
	p := plain{Address: f.Address}
	for _, t := range f.Topics {
		if t == nil {
			p.Topics = append(p.Topics, nil)
		} else {
			p.Topics = append(p.Topics, t)
		}
	}
	return json.Marshal(p)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
