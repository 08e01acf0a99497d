package chains

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Spec is one chain as an operator configures it: the gateway's JSON (the
// chain entries of the tollgate handler, whose Caddyfile form is the chain
// block) and settlementd's chains file use these fields and names.
//
// A Spec for a built-in chain id changes only the fields it sets (a chain
// block that lists providers and nothing else keeps the built-in
// description). Any other id is a new chain and needs name, block_time and
// finality; display_name defaults to the name, currency to ETH with 18
// decimals.
type Spec struct {
	ID          uint64 `json:"id"`
	Name        string `json:"name,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	Testnet     bool   `json:"testnet,omitempty"`
	// BlockTime is the usual block interval ("2s").
	BlockTime Duration `json:"block_time,omitempty"`
	// Finality is a depth in blocks (64) or "tag": the chain's own
	// "finalized" block.
	Finality *FinalitySpec `json:"finality,omitempty"`
	// Explorer is the block explorer's https:// base URL.
	Explorer string    `json:"explorer,omitempty"`
	Currency *Currency `json:"currency,omitempty"`
	// Default makes this the chain of plain /rpc.
	Default bool `json:"default,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("2s",
// "250ms"); a JSON number is read as nanoseconds, as Caddy's durations are.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("block_time %q: want a duration such as 2s", s)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("block_time: want a duration such as \"2s\"")
	}
	*d = Duration(n)
	return nil
}

// FinalitySpec is Finality as configured: a JSON number (the depth) or the
// string "tag".
type FinalitySpec Finality

// MarshalJSON writes a depth as a number and the tag as "tag".
func (f FinalitySpec) MarshalJSON() ([]byte, error) {
	if f.Tag {
		return []byte(`"tag"`), nil
	}
	return []byte(strconv.FormatUint(f.Depth, 10)), nil
}

// UnmarshalJSON reads a depth (number or numeric string) or "tag".
func (f *FinalitySpec) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := ParseFinality(s)
	if err != nil {
		return err
	}
	*f = FinalitySpec(v)
	return nil
}

// nameRe is a chain name: lower case, starting with a letter so that it is
// never read as an id in /rpc/{chain}.
var nameRe = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

var symbolRe = regexp.MustCompile(`^[A-Za-z0-9.]{1,12}$`)

// MaxBlockTime bounds block_time: larger is surely a typo (the unit).
const MaxBlockTime = time.Hour

// Build makes the table from the built-in chains and specs. def, when not
// empty, names the default chain (an id or a name); it may also be given
// by one spec's Default. Every error names the chain it is about.
func Build(specs []Spec, def string) (*Table, error) {
	list := append([]Chain(nil), builtin...)
	index := map[uint64]int{}
	for i, c := range list {
		index[c.ID] = i
	}
	seen := map[uint64]bool{}
	defaultID, defaultFrom := uint64(0), ""
	for _, s := range specs {
		label := describe(s)
		if s.ID == 0 {
			return nil, fmt.Errorf("chain %s: id is required (a positive chain id)", label)
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("chain %s: configured twice (duplicate id %d)", label, s.ID)
		}
		seen[s.ID] = true
		i, known := index[s.ID]
		var c Chain
		if known {
			c = list[i]
		} else {
			var missing []string
			if s.Name == "" {
				missing = append(missing, "name")
			}
			if s.BlockTime == 0 {
				missing = append(missing, "block_time")
			}
			if s.Finality == nil {
				missing = append(missing, "finality")
			}
			if len(missing) > 0 {
				verb := "is"
				if len(missing) > 1 {
					verb = "are"
				}
				return nil, fmt.Errorf("chain %s: %s %s missing: a chain that is not built in needs name, block_time and finality",
					label, strings.Join(missing, " and "), verb)
			}
			c = Chain{ID: s.ID, Currency: eth}
		}
		if s.Name != "" {
			if !nameRe.MatchString(s.Name) {
				return nil, fmt.Errorf("chain %s: name %q must be lower case letters, digits and '-', starting with a letter (at most 32)", label, s.Name)
			}
			c.Name = s.Name
		}
		if s.DisplayName != "" {
			if len(s.DisplayName) > 64 {
				return nil, fmt.Errorf("chain %s: display_name is longer than 64 bytes", label)
			}
			c.Display = s.DisplayName
		} else if !known {
			c.Display = c.Name
		}
		if s.Testnet {
			c.Testnet = true
		}
		if s.BlockTime != 0 {
			bt := time.Duration(s.BlockTime)
			if bt <= 0 || bt > MaxBlockTime {
				return nil, fmt.Errorf("chain %s: block_time %s: want a positive duration up to %s", label, bt, MaxBlockTime)
			}
			c.BlockTime = bt
		}
		if s.Finality != nil {
			f := Finality(*s.Finality)
			if f.IsZero() {
				return nil, fmt.Errorf("chain %s: finality: want a depth in blocks (a positive integer) or tag", label)
			}
			c.Finality = f
		}
		if s.Explorer != "" {
			if err := checkExplorer(s.Explorer); err != nil {
				return nil, fmt.Errorf("chain %s: %w", label, err)
			}
			c.Explorer = strings.TrimRight(s.Explorer, "/")
		}
		if s.Currency != nil {
			if !symbolRe.MatchString(s.Currency.Symbol) {
				return nil, fmt.Errorf("chain %s: currency symbol %q: want 1 to 12 letters or digits", label, s.Currency.Symbol)
			}
			if s.Currency.Decimals > 36 {
				return nil, fmt.Errorf("chain %s: currency decimals %d: want 0 to 36", label, s.Currency.Decimals)
			}
			c.Currency = *s.Currency
		}
		if s.Default {
			if defaultID != 0 {
				return nil, fmt.Errorf("chain %s: default, but chain %s is already the default", label, defaultFrom)
			}
			defaultID, defaultFrom = s.ID, label
		}
		if known {
			list[i] = c
		} else {
			index[s.ID] = len(list)
			list = append(list, c)
		}
	}
	names := map[string]uint64{}
	for _, c := range list {
		if other, dup := names[c.Name]; dup {
			return nil, fmt.Errorf("chain %d (%s): name %q is already chain %d's (duplicate name)", c.ID, c.Name, c.Name, other)
		}
		names[c.Name] = c.ID
	}
	if def != "" {
		id, ok := resolve(list, def)
		if !ok {
			return nil, fmt.Errorf("default chain %q is not configured (unknown default; configured: %s)", def, joinNames(list))
		}
		if defaultID != 0 && defaultID != id {
			return nil, fmt.Errorf("default chain %q, but chain %s says default too", def, defaultFrom)
		}
		defaultID = id
	}
	if defaultID == 0 {
		defaultID = Default
	}
	// Default first, the others in their order.
	d := index[defaultID]
	ordered := append([]Chain{list[d]}, list[:d]...)
	ordered = append(ordered, list[d+1:]...)
	t := &Table{list: ordered, byID: map[uint64]int{}, byName: map[string]int{}}
	ids := make([]string, len(ordered))
	for i, c := range ordered {
		t.byID[c.ID] = i
		t.byName[c.Name] = i
		ids[i] = strconv.FormatUint(c.ID, 10)
	}
	t.ids, t.names = strings.Join(ids, ", "), joinNames(ordered)
	return t, nil
}

func joinNames(list []Chain) string {
	names := make([]string, len(list))
	for i, c := range list {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

func resolve(list []Chain, s string) (uint64, bool) {
	id, err := strconv.ParseUint(s, 10, 64)
	for _, c := range list {
		if (err == nil && c.ID == id) || (err != nil && strings.EqualFold(c.Name, s)) {
			return c.ID, true
		}
	}
	return 0, false
}

// describe names a spec in errors: "10 (optimism)".
func describe(s Spec) string {
	if s.Name != "" {
		return fmt.Sprintf("%d (%s)", s.ID, s.Name)
	}
	return strconv.FormatUint(s.ID, 10)
}

func checkExplorer(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("explorer %q must be an https:// URL (no credentials, query or fragment)", raw)
	}
	return nil
}

// File is settlementd's chains file (JSON): the same chain entries as the
// gateway's configuration, and the default chain.
//
//	{"default_chain": "polygon",
//	 "chains": [{"id": 10, "name": "optimism", "display_name": "OP Mainnet",
//	             "block_time": "2s", "finality": "tag", "explorer": "https://optimistic.etherscan.io",
//	             "currency": {"symbol": "ETH", "decimals": 18}}]}
type File struct {
	DefaultChain string `json:"default_chain,omitempty"`
	Chains       []Spec `json:"chains"`
}

// LoadFile reads and validates a chains file; unknown keys are refused (a
// misspelt key would silently lose a setting).
func LoadFile(path string) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chains file: %w", err)
	}
	var f File
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("chains file %s: %w", path, err)
	}
	t, err := Build(f.Chains, f.DefaultChain)
	if err != nil {
		return nil, fmt.Errorf("chains file %s: %w", path, err)
	}
	return t, nil
}

// Live holds the table in force where it can change while running
// (settlementd's SIGHUP): readers Load it with one atomic read.
type Live struct{ p atomic.Pointer[Table] }

// NewLive holds t (the built-in table when nil).
func NewLive(t *Table) *Live {
	if t == nil {
		t = Builtin()
	}
	l := &Live{}
	l.p.Store(t)
	return l
}

// Load returns the table in force; a nil Live is the built-in table.
func (l *Live) Load() *Table {
	if l == nil {
		return Builtin()
	}
	return l.p.Load()
}

// Store puts t in force.
func (l *Live) Store(t *Table) { l.p.Store(t) }
