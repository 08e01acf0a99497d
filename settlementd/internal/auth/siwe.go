// Package auth is the node operators' wallet login: a Sign-In with Ethereum
// (EIP-4361) challenge with a single-use nonce, verified as an EIP-191
// personal_sign signature, answered with a 1-hour HS256 JWT whose sub is the
// lower-case wallet address. The nonce is signed (Challenger), not stored:
// only a login that signed it records it, to use it once.
package auth

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// Message is the subset of EIP-4361 this service issues and accepts.
type Message struct {
	Domain    string
	Address   common.Address
	Statement string
	URI       string
	Version   string
	ChainID   uint64
	Nonce     string
	IssuedAt  time.Time
	ExpiresAt time.Time
}

const header = " wants you to sign in with your Ethereum account:"

// String renders the message exactly as EIP-4361 lays it out.
func (m Message) String() string {
	var b strings.Builder
	b.WriteString(m.Domain + header + "\n")
	b.WriteString(m.Address.Hex() + "\n\n")
	if m.Statement != "" {
		b.WriteString(m.Statement + "\n")
	}
	b.WriteString("\nURI: " + m.URI)
	b.WriteString("\nVersion: " + m.Version)
	b.WriteString("\nChain ID: " + strconv.FormatUint(m.ChainID, 10))
	b.WriteString("\nNonce: " + m.Nonce)
	b.WriteString("\nIssued At: " + m.IssuedAt.UTC().Format(time.RFC3339))
	b.WriteString("\nExpiration Time: " + m.ExpiresAt.UTC().Format(time.RFC3339))
	return b.String()
}

var (
	domainRe = regexp.MustCompile(`^[A-Za-z0-9.-]+(:[0-9]{1,5})?$`)
	nonceRe  = regexp.MustCompile(`^[A-Za-z0-9]{8,64}$`)
	addrRe   = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
)

// Parse reads a message in exactly the layout String writes (strict: every
// field this service puts in, in order, nothing else).
func Parse(s string) (Message, error) {
	var m Message
	lines := strings.Split(s, "\n")
	if len(lines) < 10 {
		return m, errors.New("siwe: too few lines")
	}
	d, ok := strings.CutSuffix(lines[0], header)
	if !ok || !domainRe.MatchString(d) {
		return m, errors.New("siwe: bad first line")
	}
	m.Domain = d
	a, aerr := ethparse.Address(lines[1]) // a mixed-case address must carry its right EIP-55 checksum
	if !addrRe.MatchString(lines[1]) || aerr != nil {
		return m, errors.New("siwe: bad address line")
	}
	m.Address = a
	if lines[2] != "" {
		return m, errors.New("siwe: missing blank line after the address")
	}
	i := 3
	if lines[i] != "" { // optional statement, then a blank line
		if strings.Contains(lines[i], ":") && strings.HasPrefix(lines[i], "URI") {
			return m, errors.New("siwe: missing blank line before the fields")
		}
		m.Statement = lines[i]
		i++
	}
	if i >= len(lines) || lines[i] != "" {
		return m, errors.New("siwe: missing blank line before the fields")
	}
	i++
	fields := []string{"URI", "Version", "Chain ID", "Nonce", "Issued At", "Expiration Time"}
	if len(lines)-i != len(fields) {
		return m, fmt.Errorf("siwe: want exactly the fields %v", fields)
	}
	vals := map[string]string{}
	for k, f := range fields {
		v, ok := strings.CutPrefix(lines[i+k], f+": ")
		if !ok || v == "" {
			return m, fmt.Errorf("siwe: line %d must be %q", i+k+1, f+": …")
		}
		vals[f] = v
	}
	m.URI, m.Version, m.Nonce = vals["URI"], vals["Version"], vals["Nonce"]
	if m.Version != "1" {
		return m, errors.New("siwe: version must be 1")
	}
	if !nonceRe.MatchString(m.Nonce) {
		return m, errors.New("siwe: bad nonce")
	}
	var err error
	if m.ChainID, err = strconv.ParseUint(vals["Chain ID"], 10, 64); err != nil {
		return m, errors.New("siwe: bad chain id")
	}
	if m.IssuedAt, err = time.Parse(time.RFC3339, vals["Issued At"]); err != nil {
		return m, errors.New("siwe: bad issued-at time")
	}
	if m.ExpiresAt, err = time.Parse(time.RFC3339, vals["Expiration Time"]); err != nil {
		return m, errors.New("siwe: bad expiration time")
	}
	return m, nil
}
