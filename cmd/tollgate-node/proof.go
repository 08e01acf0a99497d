package main

// The endpoint proof: registration fetches <scheme>://<host>/.well-known/
// tollgate-node on the rpc_url's origin, without following redirects, and
// wants the registrant's wallet address as the first line of a 200 answer.
// proof prints that line (or writes the file a web server serves), and
// proof --check asks the endpoint as registration will.

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-rpc/tollgate/shared/ethparse"
)

// proofPath is where the endpoint's origin serves the proof.
const proofPath = "/.well-known/tollgate-node"

func (a *app) proofCmd(args []string) error {
	f := a.flags("proof", withKey)
	outFile := f.String("out", "", "write the proof to this file, e.g. <web root>/.well-known/tollgate-node (directories are made)")
	check := f.String("check", "", "fetch the proof from this RPC URL's origin, as registration does, and check it")
	if err := f.parse(args); err != nil {
		return err
	}
	addr, err := a.keys.Address()
	if err != nil {
		return err
	}
	line := addr.Hex() + "\n"
	if *outFile != "" {
		p := expandHome(*outFile, a.getenv)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		// Public by design: the web server serves it to anyone.
		if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
			return err
		}
	}
	var proofURL string
	if *check != "" {
		if proofURL, err = checkProof(a, *check, addr.Hex()); err != nil {
			return err
		}
	}
	return a.out(map[string]any{"address": addr.Hex(), "path": proofPath, "file": *outFile, "checked": proofURL}, func(w io.Writer) {
		switch {
		case *check != "":
			fmt.Fprintf(w, "ok: %s names %s\n", proofURL, addr.Hex())
		case *outFile != "":
			fmt.Fprintf(w, "wrote %s: serve it as %s on your node's origin (status 200, no redirect)\n", *outFile, proofPath)
		default:
			fmt.Fprint(w, line)
		}
	})
}

// checkProof asks rpcURL's origin for the proof, as registration does.
func checkProof(a *app, rpcURL, want string) (string, error) {
	u, err := url.Parse(rpcURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usagef("proof --check %q: want the node's http(s) RPC URL", rpcURL)
	}
	proof := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: proofPath}).String()
	c := &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(a.ctx, http.MethodGet, proof, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("the proof at %s: %w", proof, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the proof at %s: HTTP %s, want 200 (redirects are not followed)", proof, strconv.Itoa(resp.StatusCode))
	}
	first, _ := bufio.NewReader(io.LimitReader(resp.Body, 1024)).ReadString('\n')
	got, err := ethparse.Address(strings.TrimSpace(first))
	if err != nil {
		return "", fmt.Errorf("the proof at %s: its first line %q is not an address; serve %s", proof, snippet([]byte(first)), want)
	}
	if !strings.EqualFold(got.Hex(), want) {
		return "", fmt.Errorf("the proof at %s names %s, not your wallet %s", proof, got.Hex(), want)
	}
	return proof, nil
}
