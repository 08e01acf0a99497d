package nodes

// Registration proves the registrant controls the endpoint (issue 41.7),
// and cannot be repeated at will:
//
//   - Ownership: GET <scheme>://<host>/.well-known/tollgate-node on the
//     rpc_url's origin must answer 200 with the registrant's wallet address
//     as the first line of its body (any case). Only whoever controls what
//     the endpoint's host serves can put it there: a public provider's
//     URL, or anyone else's node, fails — the standing earned there, and
//     the revenue, cannot be bought by pointing at someone else's work.
//     Every address the proof's dial reaches passes the node policy, like
//     the probe; redirects are not followed.
//   - Known public providers' hosts are refused before anything is asked
//     (publicProviders): a gateway already has them as providers.
//   - Rate: a wallet registers at most Config.RegisterPerHour endpoints an
//     hour and the whole service at most 20 times that (Redis counters per
//     hour), so shadows and probes cannot be multiplied by a flood of
//     registrations.
//
// Config.Proof switches the ownership proof; it may be off only with
// private addresses allowed (development and tests), where it is off by
// default (TOLLGATE_NODE_PROOF=required turns it on there).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// ProofPath is where the ownership proof is served on the endpoint's origin.
const ProofPath = "/.well-known/tollgate-node"

// DefaultRegisterPerHour is how many endpoints a wallet may register an hour.
const DefaultRegisterPerHour = 10

// publicProviders are host suffixes of public RPC providers: never a
// stranger's node.
var publicProviders = []string{
	"alchemy.com", "alchemyapi.io", "infura.io", "quiknode.pro", "quicknode.com", "ankr.com", "publicnode.com",
	"llamarpc.com", "drpc.org", "blastapi.io", "chainstack.com", "polygon-rpc.com", "base.org", "arbitrum.io",
	"cloudflare-eth.com", "getblock.io", "nodereal.io", "1rpc.io", "blockpi.network", "tenderly.co", "onfinality.io",
}

// publicProvider reports whether host belongs to a known public provider.
func publicProvider(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	for _, s := range publicProviders {
		if h == s || strings.HasSuffix(h, "."+s) {
			return true
		}
	}
	return false
}

// proveControl asks the endpoint's origin for the ownership proof.
func (s *Service) proveControl(ctx context.Context, rpcURL, wallet string) error {
	u, err := url.Parse(rpcURL)
	if err != nil {
		return bad("invalid_rpc_url", "rpc_url is not a URL")
	}
	proof := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: ProofPath}).String()
	fail := func(why string) error {
		return &apiError{http.StatusForbidden, "endpoint_not_proven",
			fmt.Sprintf("prove you control the endpoint: serve your wallet address %s as the first line of %s (%s)", wallet, proof, why)}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, proof, nil)
	if err != nil {
		return fail("bad URL")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fail("it did not answer")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail("it answered HTTP " + strconv.Itoa(resp.StatusCode))
	}
	line, _ := bufio.NewReader(io.LimitReader(resp.Body, 1024)).ReadString('\n')
	line = strings.TrimSpace(line)
	if !common.IsHexAddress(line) || !strings.EqualFold(common.HexToAddress(line).Hex(), common.HexToAddress(wallet).Hex()) {
		return fail("it does not name your wallet")
	}
	return nil
}

// allowRegistration counts a registration attempt of wallet against the
// hourly limits (Redis, shared by every settlementd).
func (s *Service) allowRegistration(ctx context.Context, wallet string) error {
	limit := s.cfg.RegisterPerHour
	if limit < 0 {
		return nil
	}
	if limit == 0 {
		limit = DefaultRegisterPerHour
	}
	hour := time.Now().UTC().Format("2006010215")
	key := s.cfg.Prefix + "nodes:register:" + hour + ":"
	pipe := s.cfg.Redis.TxPipeline()
	mine := pipe.Incr(ctx, key+strings.ToLower(wallet))
	all := pipe.Incr(ctx, key+"all")
	pipe.Expire(ctx, key+strings.ToLower(wallet), 2*time.Hour)
	pipe.Expire(ctx, key+"all", 2*time.Hour)
	if _, err := pipe.Exec(ctx); err != nil {
		return &apiError{http.StatusServiceUnavailable, "registration_unavailable", "the registration limit could not be checked; try again"}
	}
	if mine.Val() > int64(limit) || all.Val() > int64(20*limit) {
		return &apiError{http.StatusTooManyRequests, "registration_rate_limited",
			fmt.Sprintf("at most %d node registrations per wallet an hour (and %d in all); try again next hour", limit, 20*limit)}
	}
	return nil
}
