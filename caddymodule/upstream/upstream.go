package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"

	"go.uber.org/zap/zapcore"

	"github.com/tollgate-rpc/tollgate/shared/events"
)

// Kind says where an upstream comes from. It decides selection order:
// registered nodes are preferred and providers are the fallback,
// because nodes earn from the traffic they serve.
type Kind string

const (
	// KindProvider is a configured RPC provider (Alchemy, Infura, ...).
	KindProvider Kind = "provider"
	// KindNode is an operator's node from the node registry.
	KindNode Kind = "node"
)

// Upstream describes one JSON-RPC endpoint.
//
// URL and Headers may hold credentials. String, GoString, MarshalJSON and
// MarshalLogObject therefore show only scheme://host and never the headers,
// so an Upstream can be printed, logged or put in a JSON answer safely.
// (Unmarshalling from JSON uses the field tags and reads everything.)
type Upstream struct {
	// Name identifies the upstream inside its pool (unique). For nodes it
	// defaults to NodeID.
	Name string `json:"name"`
	// URL is the full endpoint, path and query included (e.g. a key-in-path
	// provider URL).
	URL string `json:"url"`
	// Headers are sent with every request, e.g. an auth token.
	Headers map[string]string `json:"headers,omitempty"`
	// Kind is provider or node; empty means the kind implied by where the
	// upstream is given (Config.Providers or SetNodes).
	Kind Kind `json:"kind,omitempty"`
	// NodeID is the registry id of a node (NODE-<region>-<suffix>); revenue
	// events name it. Required for nodes.
	NodeID string `json:"node_id,omitempty"`
	// ChainID is the chain the upstream claims to serve. Zero means the
	// pool's chain; any other value must equal it.
	ChainID uint64 `json:"chain_id,omitempty"`
	// Weight scales a node's share of traffic (default 1). Among providers
	// it is unused: the fastest provider is taken.
	Weight float64 `json:"weight,omitempty"`
	// WSURL is the upstream's JSON-RPC-over-WebSocket endpoint (ws:// or
	// wss://), used for eth_subscribe (caddymodule/subscribe); empty when it
	// offers none. It may carry a key like URL and is kept as secret; the
	// same Headers are sent with the handshake.
	WSURL string `json:"ws_url,omitempty"`
	// Operator is the node's operator wallet (the registry's wallet). A
	// wallet's nodes share one standing: one probation, one rung of the
	// ladder, one share divided among them (trust.go). Empty: the node
	// stands alone.
	Operator string `json:"operator,omitempty"`
}

// String shows kind, name and scheme://host only.
func (u Upstream) String() string {
	k := u.Kind
	if k == "" {
		k = "upstream"
	}
	return fmt.Sprintf("%s %q (%s)", k, u.Name, redactURLString(u.URL))
}

// GoString keeps %#v from printing the URL and headers.
func (u Upstream) GoString() string { return "upstream.Upstream{" + u.String() + "}" }

// MarshalJSON writes the public fields with the URL cut to scheme://host and
// without headers.
func (u Upstream) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name    string  `json:"name"`
		URL     string  `json:"url"`
		Kind    Kind    `json:"kind,omitempty"`
		NodeID  string  `json:"node_id,omitempty"`
		ChainID uint64  `json:"chain_id,omitempty"`
		Weight  float64 `json:"weight,omitempty"`
		WS      bool    `json:"ws,omitempty"`
	}{u.Name, redactURLString(u.URL), u.Kind, u.NodeID, u.ChainID, u.Weight, u.WSURL != ""})
}

// MarshalLogObject makes zap.Object(upstream) safe to log.
func (u Upstream) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("name", u.Name)
	enc.AddString("kind", string(u.Kind))
	if u.NodeID != "" {
		enc.AddString("node_id", u.NodeID)
	}
	enc.AddString("host", redactURLString(u.URL))
	return nil
}

// Ref names the upstream that served a call, without any endpoint detail.
type Ref struct {
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	NodeID string `json:"node_id,omitempty"`
}

// EventName is what the revenue event records as the server of a call:
// the node id for a registered node, the provider name
// otherwise.
func (r Ref) EventName() string {
	if r.Kind == KindNode && r.NodeID != "" {
		return r.NodeID
	}
	return r.Name
}

// ServedBy is r as the revenue event records the server of a call.
func (r Ref) ServedBy() events.ServedBy {
	if r.Kind == KindNode {
		return events.ServedBy{Upstream: r.EventName(), NodeID: r.NodeID}
	}
	return events.ServedBy{Upstream: r.EventName()}
}

// normalize checks u and fills defaults. want is the kind implied by where u
// was given; chainID is the pool's chain.
func normalize(u Upstream, want Kind, chainID uint64) (Upstream, *url.URL, error) {
	if u.Kind == "" {
		u.Kind = want
	}
	if u.Kind != want {
		return u, nil, fmt.Errorf("upstream %q: kind %q given where %q is expected", u.Name, u.Kind, want)
	}
	if u.Kind == KindNode {
		if u.NodeID == "" {
			return u, nil, fmt.Errorf("upstream %q: node without node id", u.Name)
		}
		if u.Name == "" {
			u.Name = u.NodeID
		}
	}
	if u.Name == "" {
		return u, nil, errors.New("upstream without name")
	}
	parsed, err := url.Parse(u.URL)
	if err != nil {
		// url.Parse echoes the URL in its error; do not pass it on.
		return u, nil, fmt.Errorf("upstream %q: invalid URL", u.Name)
	}
	if parsed.Scheme != "http" && parsed.Scheme != "https" {
		return u, nil, fmt.Errorf("upstream %q: URL scheme must be http or https", u.Name)
	}
	if parsed.Host == "" {
		return u, nil, fmt.Errorf("upstream %q: URL without host", u.Name)
	}
	if u.WSURL != "" {
		ws, err := url.Parse(u.WSURL)
		if err != nil {
			return u, nil, fmt.Errorf("upstream %q: invalid ws URL", u.Name)
		}
		if ws.Scheme != "ws" && ws.Scheme != "wss" {
			return u, nil, fmt.Errorf("upstream %q: ws URL scheme must be ws or wss", u.Name)
		}
		if ws.Host == "" {
			return u, nil, fmt.Errorf("upstream %q: ws URL without host", u.Name)
		}
		u.WSURL = ws.String()
	}
	if u.ChainID == 0 {
		u.ChainID = chainID
	}
	if u.ChainID != chainID {
		return u, nil, fmt.Errorf("upstream %q: registered for chain %d, pool serves chain %d", u.Name, u.ChainID, chainID)
	}
	if u.Weight == 0 {
		u.Weight = 1
	}
	if u.Weight < 0 || math.IsNaN(u.Weight) || math.IsInf(u.Weight, 0) {
		return u, nil, fmt.Errorf("upstream %q: weight must be a positive number", u.Name)
	}
	if len(u.Headers) > 0 {
		h := make(map[string]string, len(u.Headers))
		for k, v := range u.Headers {
			h[http.CanonicalHeaderKey(k)] = v
		}
		u.Headers = h
	}
	return u, parsed, nil
}

// redactURL is the only form of an upstream URL that leaves this package.
func redactURL(u *url.URL) string { return u.Scheme + "://" + u.Host }

func redactURLString(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "invalid-url"
	}
	return redactURL(u)
}

// redactor removes an upstream's secrets from error text. Transport errors
// (url.Error) quote the full request URL, which may hold an API key; and a
// misbehaving upstream could echo our headers back in an error message.
type redactor struct {
	r *strings.Replacer
}

func newRedactor(u *url.URL, headers map[string]string) *redactor {
	host := redactURL(u)
	// Longest, most specific first: NewReplacer tries pairs in order.
	pairs := []string{u.String(), host}
	if u.User != nil {
		pairs = append(pairs, u.User.String()+"@", "")
		if p, ok := u.User.Password(); ok && p != "" {
			pairs = append(pairs, p, "REDACTED")
		}
	}
	if len(u.EscapedPath()) > 1 {
		pairs = append(pairs, u.EscapedPath(), "/REDACTED")
		if u.Path != u.EscapedPath() && len(u.Path) > 1 {
			pairs = append(pairs, u.Path, "/REDACTED")
		}
	}
	if u.RawQuery != "" {
		pairs = append(pairs, u.RawQuery, "REDACTED")
	}
	for _, v := range headers {
		// Very short values (e.g. "1") would mangle unrelated text and
		// are not credentials. The token alone is covered too, for
		// "Bearer <token>" values echoed without the scheme.
		if len(v) >= 6 {
			pairs = append(pairs, v, "REDACTED")
		}
		for _, f := range strings.Fields(v) {
			if len(f) >= 8 && f != v {
				pairs = append(pairs, f, "REDACTED")
			}
		}
	}
	return &redactor{r: strings.NewReplacer(pairs...)}
}

func (r *redactor) redact(s string) string {
	return userInfoRedact(r.r.Replace(s))
}

// userInfoRedact strips any "scheme://user:pass@" left in s (URLs of other
// upstreams or redirects we did not build a redactor for).
func userInfoRedact(s string) string {
	for i := 0; ; {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			return s
		}
		start := i + j + 3
		end := start
		for end < len(s) && !strings.ContainsRune("/?# \t\n\"'", rune(s[end])) {
			end++
		}
		if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
			s = s[:start] + "REDACTED@" + s[start+at+1:]
			end = start + len("REDACTED@")
		}
		i = end
	}
}
