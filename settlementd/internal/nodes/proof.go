package nodes

// Registration proves the registrant controls the endpoint,
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
	"github.com/tollgate-rpc/tollgate/shared/ethparse"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
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
	named, err := ethparse.Address(line)
	owner, werr := ethparse.Address(wallet)
	if err != nil || werr != nil || named != owner {
		return fail("it does not name your wallet")
	}
	return nil
}

// registerLimit is the per-wallet and service-wide limits.
func (s *Service) registerLimit() int {
	if s.cfg.RegisterPerHour == 0 {
		return DefaultRegisterPerHour
	}
	return s.cfg.RegisterPerHour
}

func (s *Service) registerKey() string {
	return s.cfg.Prefix + "nodes:register:" + time.Now().UTC().Format("2006010215") + ":"
}

// allowScript counts an attempt against the wallet's hourly limit and
// reads the service-wide count of proven registrations, in one step. A
// wallet over its own limit is refused without touching anything shared,
// and the shared count is raised only by countRegistration, after the
// proof: neither one wallet hammering nor many wallets with endpoints they
// cannot prove can spend the service-wide limit and lock newcomers out.
var allowScript = redis.NewScript(`
local mine = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], 7200)
if mine > tonumber(ARGV[1]) then return 1 end
local all = tonumber(redis.call('GET', KEYS[2]) or '0')
if all >= tonumber(ARGV[2]) then return 2 end
return 0`)

// allowRegistration counts a registration attempt of wallet against the
// hourly limits (Redis, shared by every settlementd).
func (s *Service) allowRegistration(ctx context.Context, wallet string) error {
	limit := s.registerLimit()
	if limit < 0 {
		return nil
	}
	key := s.registerKey()
	r, err := allowScript.Run(ctx, s.cfg.Redis, []string{key + strings.ToLower(wallet), key + "all"}, limit, 20*limit).Int()
	if err != nil {
		return &apiError{http.StatusServiceUnavailable, "registration_unavailable", "the registration limit could not be checked; try again"}
	}
	if r != 0 {
		return &apiError{http.StatusTooManyRequests, "registration_rate_limited",
			fmt.Sprintf("at most %d node registrations per wallet an hour (and %d in all); try again next hour", limit, 20*limit)}
	}
	return nil
}

// countRegistration books a proven registration against the service-wide
// hourly limit. Best effort: a failure here must not undo a registration
// already stored.
func (s *Service) countRegistration(ctx context.Context) {
	if s.registerLimit() < 0 {
		return
	}
	key := s.registerKey() + "all"
	pipe := s.cfg.Redis.TxPipeline()
	pipe.Incr(ctx, key)
	pipe.Expire(ctx, key, 2*time.Hour)
	_, _ = pipe.Exec(ctx)
}
