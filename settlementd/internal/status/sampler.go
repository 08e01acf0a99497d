package status

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Sampler is the leader job that measures the gateway's upstream path and
// stores one health sample per run. It asks the gateway's POST
// /admin/probe/137 (with the gateway's admin token): one eth_blockNumber
// through chain 137's upstream pool, unmetered and uncached. A sample is ok
// only when the gateway answers 200 with a block number; anything else —
// no answer, 401, 402, 429, 503 — is down, with the reason. (Probing /rpc
// keyless would spend this host's free tier and then count the gateway's 402
// as up; a key of its own would pay the platform's revenue to itself.)
// Latency is the round trip in milliseconds. Samples older than 8 days are
// deleted.
type Sampler struct {
	Pool       *pgxpool.Pool
	Gateway    string // TOLLGATE_GATEWAY_URL, without a trailing slash
	AdminToken string // the gateway's admin token (TOLLGATE_GATEWAY_ADMIN_TOKEN)
	Client     *http.Client
	Timeout    time.Duration // default 10 s
}

// Name implements jobs.Job.
func (s *Sampler) Name() string { return "gateway-health" }

// Run takes one sample.
func (s *Sampler) Run(ctx context.Context) error {
	if s.Timeout <= 0 {
		s.Timeout = 10 * time.Second
	}
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: s.Timeout}
	}
	ok, status, ms, msg := s.probe(ctx, client)
	var errText *string
	if msg != "" {
		errText = &msg
	}
	if _, err := s.Pool.Exec(ctx, `INSERT INTO health_samples (ok, latency_ms, status, error) VALUES ($1, $2, $3, $4)`, ok, ms, status, errText); err != nil {
		return err
	}
	_, err := s.Pool.Exec(ctx, `DELETE FROM health_samples WHERE at < now() - interval '8 days'`)
	return err
}

func (s *Sampler) probe(ctx context.Context, client *http.Client) (bool, int, float64, string) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Gateway+"/admin/probe/137", nil)
	if err != nil {
		return false, 0, 0, "bad gateway URL"
	}
	req.Header.Set("X-Admin-Token", s.AdminToken)
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return false, 0, float64(time.Since(began).Microseconds()) / 1000, "no answer"
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	ms := float64(time.Since(began).Microseconds()) / 1000
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		reason := "HTTP " + http.StatusText(resp.StatusCode)
		if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
			reason += ": " + e.Error.Code
		}
		return false, resp.StatusCode, ms, reason
	}
	var out struct {
		BlockNumber string `json:"block_number"`
	}
	if json.Unmarshal(body, &out) != nil || out.BlockNumber == "" {
		return false, resp.StatusCode, ms, "no block number in the probe's answer"
	}
	return true, resp.StatusCode, ms, ""
}
