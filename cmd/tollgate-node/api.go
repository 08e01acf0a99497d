package main

// The gateway's HTTP API as a node operator uses it (the gateway forwards
// /api/auth/* and /api/nodes* to settlementd): every answer is read into
// the fields this command shows, and any other answer — an error body, a
// page from a proxy, a truncated or malformed document — becomes an error
// that says what was asked and what came back, never a panic or a zero
// read as a real value.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// maxAnswer bounds what is read of one answer (the largest, a node list of
// 1000 nodes with their standing, is well below it).
const maxAnswer = 8 << 20

// apiError is an HTTP answer other than the one expected.
type apiError struct {
	Method, Path string
	Status       int
	Code         string // the JSON error's code, when the body was one
	Message      string
	Body         string // else the start of the body
}

func (e *apiError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("%s %s: HTTP %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("%s %s: HTTP %d (not a JSON error body: %q)", e.Method, e.Path, e.Status, e.Body)
}

// client talks to one gateway.
type client struct {
	base  *url.URL
	http  *http.Client
	token string // the session's JWT, when signed in
}

// parseGateway checks the gateway's base URL.
func parseGateway(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("no gateway: set --gateway or TOLLGATE_NODE_GATEWAY (e.g. https://rpc.example.com)")
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("gateway %q: want an http(s) URL such as https://rpc.example.com, without credentials or query", raw)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		// In the clear, anyone on the way reads the sign-in signature and
		// the token (and may answer in the gateway's name: the claim's
		// contract, the chain's answers): the operator's account at the
		// gateway for the token's hour. Plain http is for this machine.
		return nil, fmt.Errorf("gateway %q: plain http only to this machine (localhost, 127.0.0.1, ::1); a gateway elsewhere must be https", raw)
	}
	return u, nil
}

// loopback: host names this machine (localhost or a loopback address).
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func newClient(base *url.URL) *client {
	return &client{base: base, http: &http.Client{Timeout: 30 * time.Second,
		// Redirects are not followed: a token is for this gateway only.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request and decodes a JSON answer of one of the statuses
// wanted into out; it returns the answer's body and status.
func (c *client) do(ctx context.Context, method, path string, body any, want []int, out any) ([]byte, int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if len(raw) > maxAnswer {
		return nil, 0, fmt.Errorf("%s %s: the answer is over %d bytes", method, path, maxAnswer)
	}
	if !slices.Contains(want, resp.StatusCode) {
		e := &apiError{Method: method, Path: path, Status: resp.StatusCode}
		var eb struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &eb) == nil && eb.Error.Code != "" {
			e.Code, e.Message = eb.Error.Code, eb.Error.Message
		} else {
			e.Body = snippet(raw)
		}
		return nil, resp.StatusCode, e
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return nil, resp.StatusCode, fmt.Errorf("%s %s: HTTP %d but Content-Type %q, not JSON: %q", method, path, resp.StatusCode, ct, snippet(raw))
	}
	if out == nil {
		return raw, resp.StatusCode, nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, resp.StatusCode, fmt.Errorf("%s %s: the answer is not the expected JSON: %v (%q)", method, path, err, snippet(raw))
	}
	if v, ok := out.(interface{ check() error }); ok {
		if err := v.check(); err != nil {
			return nil, resp.StatusCode, fmt.Errorf("%s %s: the answer is incomplete: %v (%q)", method, path, err, snippet(raw))
		}
	}
	return raw, resp.StatusCode, nil
}

// snippet is the start of a body, printable, for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

// ---------------------------------------------------------------- answers

// challengeAnswer is POST /api/auth/challenge.
type challengeAnswer struct {
	Message   string `json:"message"`
	ExpiresAt string `json:"expires_at"`
}

func (a *challengeAnswer) check() error {
	if a.Message == "" {
		return errors.New("no message")
	}
	return nil
}

// loginAnswer is POST /api/auth/login.
type loginAnswer struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expires_at"`
	Wallet    string `json:"wallet"`
}

func (a *loginAnswer) check() error {
	if a.Token == "" || a.Wallet == "" {
		return errors.New("no token or wallet")
	}
	if _, err := time.Parse(time.RFC3339, a.ExpiresAt); err != nil {
		return fmt.Errorf("expires_at %q is not a time", a.ExpiresAt)
	}
	return nil
}

// registerRequest is POST /api/nodes/register.
type registerRequest struct {
	Region   string   `json:"region"`
	RPCURL   string   `json:"rpc_url"`
	ChainIDs []uint64 `json:"chain_ids"`
	Label    string   `json:"label"`
	WSURL    string   `json:"ws_url,omitempty"`
}

// node is a node as its wallet sees it (POST register, GET /api/nodes,
// DELETE /api/nodes/{id}).
type node struct {
	NodeID           string     `json:"node_id"`
	Wallet           string     `json:"wallet"`
	Region           string     `json:"region"`
	RPCURL           string     `json:"rpc_url"`
	WSURL            string     `json:"ws_url,omitempty"`
	ChainIDs         []uint64   `json:"chain_ids"`
	Label            string     `json:"label"`
	Status           string     `json:"status"`
	CreatedAt        string     `json:"created_at"`
	DeregisteredAt   *string    `json:"deregistered_at,omitempty"`
	LastProbeAt      *string    `json:"last_probe_at,omitempty"`
	LastProbeError   *string    `json:"last_probe_error,omitempty"`
	ProbeFailures    int        `json:"probe_failures"`
	TotalEarnedUnits units      `json:"total_earned_units"`
	Standing         []standing `json:"standing,omitempty"`
}

func (n *node) check() error {
	if n.NodeID == "" || n.Status == "" {
		return errors.New("no node_id or status")
	}
	return nil
}

// standing is the wallet's trust on one chain.
type standing struct {
	ChainID          uint64   `json:"chain_id"`
	Phase            string   `json:"phase"`
	Share            *float64 `json:"traffic_share"`
	CheckRate        *float64 `json:"check_rate"`
	VerifiedMatches  int64    `json:"verified_matches"`
	VerifiedMethods  int      `json:"verified_methods"`
	ProbationMatches int      `json:"probation_matches,omitempty"`
	ServingSince     *string  `json:"serving_since"`
	Penalty          bool     `json:"penalty"`
	UpdatedAt        *string  `json:"updated_at"`
}

// nodeList is GET /api/nodes.
type nodeList struct {
	Wallet    string  `json:"wallet"`
	Nodes     []*node `json:"nodes"`
	Truncated bool    `json:"truncated"`
}

func (l *nodeList) check() error {
	if l.Wallet == "" || l.Nodes == nil {
		return errors.New("no wallet or nodes")
	}
	for _, n := range l.Nodes {
		if n == nil {
			return errors.New("a null node")
		}
		if err := n.check(); err != nil {
			return err
		}
	}
	return nil
}

// quarantine is the earnings answer's quarantine object.
type quarantine struct {
	Quarantined   bool     `json:"quarantined"`
	Since         *string  `json:"since"`
	Reason        *string  `json:"reason"`
	EvidenceIDs   []string `json:"evidence_ids"`
	EvidenceCount int64    `json:"evidence_count"`
	WithheldUnits units    `json:"withheld_units"`
	Review        string   `json:"review"`
}

// earnings is GET /api/nodes/{id}/earnings.
type earnings struct {
	NodeID                 string      `json:"node_id"`
	LastClaim              *string     `json:"last_claim"`
	TotalEarnedUnits       *units      `json:"total_earned_units"`
	AllocatedUnits         *units      `json:"allocated_units"`
	ClaimedUnits           *units      `json:"claimed_units"`
	ReservedUnits          *units      `json:"reserved_units"`
	ClaimableUnits         *units      `json:"claimable_units"`
	PendingSettlementUnits *units      `json:"pending_settlement_units"`
	Quarantine             *quarantine `json:"quarantine,omitempty"`
}

func (e *earnings) check() error {
	if e.NodeID == "" || e.TotalEarnedUnits == nil || e.AllocatedUnits == nil || e.ClaimedUnits == nil ||
		e.ReservedUnits == nil || e.ClaimableUnits == nil || e.PendingSettlementUnits == nil {
		return errors.New("a balance is missing")
	}
	return nil
}

// epoch is one closed epoch of a node (GET /api/nodes/{id}/epochs).
type epoch struct {
	EpochID       int64  `json:"epoch_id"`
	StartsAt      string `json:"starts_at"`
	Calls         int64  `json:"calls"`
	WeightUnits   units  `json:"weight_units"`
	ShareUnits    units  `json:"share_units"`
	WithheldUnits units  `json:"withheld_units"`
}

type epochList struct {
	NodeID string   `json:"node_id"`
	Epochs []*epoch `json:"epochs"`
}

func (l *epochList) check() error {
	if l.NodeID == "" || l.Epochs == nil {
		return errors.New("no node_id or epochs")
	}
	for _, e := range l.Epochs {
		if e == nil || e.EpochID == 0 {
			return errors.New("an epoch without an id")
		}
	}
	return nil
}

// claimAnswer is POST /api/nodes/{id}/claim.
type claimAnswer struct {
	Success   bool `json:"success"`
	Signature *struct {
		AmountRaw     string `json:"amount_raw"`
		CumulativeRaw string `json:"cumulative_raw"`
		Signature     string `json:"signature"`
		Deadline      string `json:"deadline"`
		DeadlineUnix  int64  `json:"deadline_unix"`
		Contract      string `json:"contract"`
		ChainID       uint64 `json:"chain_id"`
		NodeID        string `json:"node_id"`
	} `json:"signature"`
}

func (a *claimAnswer) check() error {
	s := a.Signature
	if !a.Success || s == nil || s.CumulativeRaw == "" || s.Signature == "" || s.DeadlineUnix <= 0 || s.Contract == "" || s.ChainID == 0 || s.NodeID == "" {
		return errors.New("no complete signature object")
	}
	return nil
}

// evidenceList is GET /api/nodes/{id}/evidence (shown as it comes).
type evidenceList struct {
	NodeID   string            `json:"node_id"`
	Evidence []json.RawMessage `json:"evidence"`
}

func (l *evidenceList) check() error {
	if l.NodeID == "" || l.Evidence == nil {
		return errors.New("no node_id or evidence")
	}
	return nil
}
