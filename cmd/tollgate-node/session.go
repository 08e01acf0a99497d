package main

// Signing in: the gateway's Sign-In with Ethereum challenge, signed with
// the wallet (EIP-191 personal_sign), answered by a JWT valid for an hour.
// The token is kept in the session file (readable by its owner only, like
// the key) so that the commands of that hour do not ask for the keystore's
// password again; a command that finds no valid token signs in afresh when
// it has the key.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// session is one gateway's sign-in.
type session struct {
	Wallet    string `json:"wallet"`
	Token     string `json:"token"`
	ExpiresAt string `json:"expires_at"`
}

// valid reports whether the token is good for at least another minute.
func (s *session) valid(now time.Time) bool {
	if s == nil || s.Token == "" {
		return false
	}
	exp, err := time.Parse(time.RFC3339, s.ExpiresAt)
	return err == nil && exp.After(now.Add(time.Minute))
}

// state is the session file: sign-ins by gateway, and claim signatures
// asked for but not yet seen paid on chain (claim.go), by gateway and node.
type state struct {
	Sessions map[string]*session    `json:"sessions"`
	Claims   map[string]*savedClaim `json:"claims,omitempty"`
}

func (a *app) statePath() string {
	if a.session != "" {
		return expandHome(a.session, a.getenv)
	}
	dir := a.getenv("XDG_CONFIG_HOME")
	if dir == "" {
		dir = filepath.Join(a.getenv("HOME"), ".config")
	}
	return filepath.Join(dir, "tollgate-node", "session.json")
}

func (a *app) loadState() (*state, error) {
	p := a.statePath()
	st := &state{Sessions: map[string]*session{}, Claims: map[string]*savedClaim{}}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	b, err := readSecret(p, "session file")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("session file %s is not valid JSON (%v): remove it and sign in again", p, err)
	}
	if st.Sessions == nil {
		st.Sessions = map[string]*session{}
	}
	if st.Claims == nil {
		st.Claims = map[string]*savedClaim{}
	}
	return st, nil
}

// saveState replaces the session file atomically, readable by its owner only.
func (a *app) saveState(st *state) error {
	p := a.statePath()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // WriteFile keeps an existing file's mode
		return err
	}
	return os.Rename(tmp, p)
}

// client is the gateway named by --gateway or the environment.
func (a *app) client() (*client, error) {
	u, err := parseGateway(a.gateway)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return newClient(u), nil
}

// signedIn returns a client with a valid token: the session's, or a new
// sign-in with the key.
func (a *app) signedIn() (*client, error) {
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	st, err := a.loadState()
	if err != nil {
		return nil, err
	}
	s := st.Sessions[c.base.String()]
	if s.valid(a.now()) && a.keys.configured() {
		// Another wallet's key is named: its own session is wanted.
		if addr, err := a.keys.Address(); err != nil || !strings.EqualFold(addr.Hex(), s.Wallet) {
			s = nil
		}
	}
	if s.valid(a.now()) {
		c.token = s.Token
		return c, nil
	}
	if !a.keys.configured() {
		return nil, fmt.Errorf("not signed in to %s (or the sign-in expired): run tollgate-node login with the wallet's key (--keystore or --key-file)", c.base)
	}
	if _, err := a.login(c); err != nil {
		return nil, err
	}
	return c, nil
}

// authed is c.do with the token; a 401 (the token expired or the gateway's
// secret changed) signs in again once, when the key is at hand.
func (a *app) authed(c *client, method, path string, body any, want []int, out any) ([]byte, int, error) {
	raw, status, err := c.do(a.ctx, method, path, body, want, out)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized && a.keys.configured() {
		if _, lerr := a.login(c); lerr != nil {
			return nil, 0, fmt.Errorf("%w; signing in again: %v", err, lerr)
		}
		return c.do(a.ctx, method, path, body, want, out)
	}
	return raw, status, err
}

// siweHeader reads the first two lines of a Sign-In with Ethereum message
// (EIP-4361): "<domain> wants you to sign in with your Ethereum account:"
// and the address.
func siweHeader(msg string) (domain string, addr common.Address, err error) {
	lines := strings.SplitN(msg, "\n", 3)
	const header = " wants you to sign in with your Ethereum account:"
	if len(lines) < 3 || !strings.HasSuffix(lines[0], header) {
		return "", common.Address{}, errors.New("not a Sign-In with Ethereum message")
	}
	addr, err = ethparse.Address(lines[1])
	if err != nil {
		return "", common.Address{}, fmt.Errorf("not a Sign-In with Ethereum message: %w", err)
	}
	return strings.TrimSuffix(lines[0], header), addr, nil
}

// login signs in with the key and keeps the session.
func (a *app) login(c *client) (*session, error) {
	key, err := a.keys.Load()
	if err != nil {
		return nil, err
	}
	me := crypto.PubkeyToAddress(key.PublicKey)
	var ch challengeAnswer
	if _, _, err := c.do(a.ctx, "POST", "/api/auth/challenge", map[string]string{"wallet": me.Hex()}, []int{200}, &ch); err != nil {
		return nil, err
	}
	// What is signed must be a sign-in to this gateway for this wallet: a
	// gateway relaying another site's challenge would otherwise get a
	// signature that signs the operator in there.
	domain, addr, err := siweHeader(ch.Message)
	if err != nil {
		return nil, fmt.Errorf("POST /api/auth/challenge: %w: %q", err, snippet([]byte(ch.Message)))
	}
	if domain != c.base.Host {
		return nil, fmt.Errorf("the sign-in message is for %q, not for the gateway %s: refusing to sign it", domain, c.base.Host)
	}
	if addr != me {
		return nil, fmt.Errorf("the sign-in message names wallet %s, not yours (%s): refusing to sign it", addr.Hex(), me.Hex())
	}
	sig, err := crypto.Sign(accounts.TextHash([]byte(ch.Message)), key)
	if err != nil {
		return nil, err
	}
	sig[64] += 27 // personal_sign's v
	var la loginAnswer
	if _, _, err := c.do(a.ctx, "POST", "/api/auth/login", map[string]string{"message": ch.Message, "signature": hexutil.Encode(sig)},
		[]int{200}, &la); err != nil {
		return nil, err
	}
	if got, err := ethparse.Address(la.Wallet); err != nil || got != me {
		return nil, fmt.Errorf("POST /api/auth/login: signed in as %q, not as %s", la.Wallet, me.Hex())
	}
	s := &session{Wallet: strings.ToLower(me.Hex()), Token: la.Token, ExpiresAt: la.ExpiresAt}
	c.token = s.Token
	st, err := a.loadState()
	if err != nil {
		return nil, err
	}
	st.Sessions[c.base.String()] = s
	if err := a.saveState(st); err != nil {
		return nil, fmt.Errorf("signed in, but the session could not be kept: %w", err)
	}
	return s, nil
}
