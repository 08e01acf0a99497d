package status

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Sampler is the leader job that probes the gateway's /rpc with
// eth_chainId and stores one health sample per run. A sample is ok when the
// gateway answers 200 with a JSON-RPC result, or answers 402/429 (it is up
// and metering; the probe has no credits or hit the limit). Latency is the
// round trip in milliseconds. Samples older than 8 days are deleted.
type Sampler struct {
	Pool    *pgxpool.Pool
	URL     string // TOLLGATE_GATEWAY_URL + "/rpc"
	Client  *http.Client
	Timeout time.Duration // default 10 s
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
	ok, status, ms, msg := probe(ctx, client, s.URL, s.Timeout)
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

func probe(ctx context.Context, client *http.Client, url string, timeout time.Duration) (bool, int, float64, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`))
	if err != nil {
		return false, 0, 0, "bad gateway URL"
	}
	req.Header.Set("Content-Type", "application/json")
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return false, 0, float64(time.Since(began).Microseconds()) / 1000, "no answer"
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	ms := float64(time.Since(began).Microseconds()) / 1000
	switch resp.StatusCode {
	case http.StatusOK:
		var out struct {
			Result string `json:"result"`
		}
		if json.Unmarshal(body, &out) != nil || out.Result == "" {
			return false, resp.StatusCode, ms, "no JSON-RPC result"
		}
		return true, resp.StatusCode, ms, ""
	case http.StatusPaymentRequired, http.StatusTooManyRequests:
		return true, resp.StatusCode, ms, ""
	}
	return false, resp.StatusCode, ms, "HTTP " + http.StatusText(resp.StatusCode)
}
