package nodes

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Standing is an operator's wallet's trust on one chain, as the gateways
// share it in Redis (caddymodule/trust/sync.go): verified answers, methods,
// since when it serves callers, whether a quarantine penalised it, and the
// phase, share and check rate the last gateway to update it computed. The
// gateways' public /rpc/health does not show the check rate; the operator
// sees their own here.
type Standing struct {
	ChainID          uint64   `json:"chain_id"`
	Phase            string   `json:"phase"` // probation, ladder, trusted; "unknown" before any gateway judged it
	Share            *float64 `json:"traffic_share"`
	CheckRate        *float64 `json:"check_rate"`
	VerifiedMatches  int64    `json:"verified_matches"`
	VerifiedMethods  int      `json:"verified_methods"`
	ProbationMatches int      `json:"probation_matches,omitempty"`
	ServingSince     *string  `json:"serving_since"`
	Penalty          bool     `json:"penalty"`
	UpdatedAt        *string  `json:"updated_at"`
}

// StandingKey is the gateways' Redis hash of wallet's standing on chain.
func StandingKey(prefix string, chain uint64, wallet string) string {
	return prefix + "trust:standing:" + strconv.FormatUint(chain, 10) + ":wallet:" + strings.ToLower(wallet)
}

// addStandings fills each node's Standing from Redis (one pipeline). A
// Redis failure leaves them empty: the list is still the ledger's.
func (s *Service) addStandings(ctx context.Context, wallet string, ns []*Managed) {
	chains := map[uint64]*redis.MapStringStringCmd{}
	pipe := s.cfg.Redis.Pipeline()
	for _, n := range ns {
		for _, c := range n.ChainIDs {
			if chains[c] == nil {
				chains[c] = pipe.HGetAll(ctx, StandingKey(s.cfg.Prefix, c, wallet))
			}
		}
	}
	if len(chains) == 0 {
		return
	}
	_, _ = pipe.Exec(ctx)
	for _, n := range ns {
		n.Standing = []Standing{}
		for _, c := range n.ChainIDs {
			m, err := chains[c].Result()
			if err != nil {
				continue
			}
			n.Standing = append(n.Standing, decodeStanding(c, m))
		}
	}
}

func decodeStanding(chain uint64, m map[string]string) Standing {
	st := Standing{ChainID: chain, Phase: "unknown"}
	if len(m) == 0 {
		st.Phase = "probation" // no gateway has verified an answer yet
		return st
	}
	if p := m["phase"]; p != "" {
		st.Phase = p
	}
	num := func(k string) *float64 {
		if v, err := strconv.ParseFloat(m[k], 64); err == nil {
			return &v
		}
		return nil
	}
	st.Share, st.CheckRate = num("share"), num("check_rate")
	st.VerifiedMatches, _ = strconv.ParseInt(m["matches"], 10, 64)
	st.ProbationMatches, _ = strconv.Atoi(m["probation_matches"])
	st.Penalty = m["penalty"] == "1"
	for k := range m {
		if strings.HasPrefix(k, "m:") {
			st.VerifiedMethods++
		}
	}
	at := func(k string) *string {
		if ms, err := strconv.ParseInt(m[k], 10, 64); err == nil && ms > 0 {
			s := time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
			return &s
		}
		return nil
	}
	st.ServingSince, st.UpdatedAt = at("serving_ms"), at("view_ms")
	return st
}
