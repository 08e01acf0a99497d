package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

var secrets = []string{"pa55word", "SECRETKEY123", "QUERYSECRET", "TOKENSECRET"}

func assertNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			t.Errorf("%s leaks %q: %s", what, sec, s)
		}
	}
}

func TestUpstreamNeverShowsSecrets(t *testing.T) {
	u := Upstream{
		Name: "alchemy", Kind: KindProvider,
		URL:     "https://user:pa55word@polygon.example.com/v2/SECRETKEY123?apikey=QUERYSECRET",
		Headers: map[string]string{"Authorization": "Bearer TOKENSECRET"},
	}
	for verb, s := range map[string]string{
		"%v": fmt.Sprintf("%v", u), "%+v": fmt.Sprintf("%+v", u), "%#v": fmt.Sprintf("%#v", u),
		"%s ptr": fmt.Sprintf("%s", &u), "slice": fmt.Sprint([]Upstream{u}),
		"config": fmt.Sprintf("%+v", Config{Providers: []Upstream{u}}),
	} {
		assertNoSecret(t, verb, s)
		if !strings.Contains(s, "https://polygon.example.com") {
			t.Errorf("%s: no host in %s", verb, s)
		}
	}
	b, err := json.Marshal(u)
	must(t, err)
	assertNoSecret(t, "json", string(b))

	var buf bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zap.DebugLevel))
	log.Info("x", zap.Object("u", u), zap.Any("any", u))
	assertNoSecret(t, "zap", buf.String())
	if !strings.Contains(buf.String(), "polygon.example.com") {
		t.Errorf("zap: %s", buf.String())
	}

	// Unmarshalling still reads the whole config.
	var back Upstream
	must(t, json.Unmarshal([]byte(`{"name":"a","url":"https://h/v2/KEY","headers":{"X-Key":"k"}}`), &back))
	if back.URL != "https://h/v2/KEY" || back.Headers["X-Key"] != "k" {
		t.Fatalf("%#v", back.Headers)
	}
}

func TestErrorsAndLogsNeverShowSecrets(t *testing.T) {
	var buf bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zap.DebugLevel))
	dead := strings.TrimPrefix(deadURL(t), "http://")
	cfg := testConfig(Upstream{
		Name:    "secret-provider",
		URL:     "http://user:pa55word@" + dead + "/v2/SECRETKEY123?apikey=QUERYSECRET",
		Headers: map[string]string{"X-Api-Key": "TOKENSECRET"},
	})
	cfg.Breaker.FailuresToOpen = 1
	cfg.Logger = log
	p := newTestPool(t, cfg)
	p.ProbeNow(t.Context())

	_, err := forward(t, p, balanceCall, ForwardOptions{})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	assertNoSecret(t, "error", err.Error())
	snap, _ := json.Marshal(p.Snapshot())
	assertNoSecret(t, "snapshot", string(snap))
	assertNoSecret(t, "logs", buf.String())
	s := upstreamState(t, p, "secret-provider")
	if s.Host != "http://"+dead || !strings.Contains(s.LastError, dead) || s.LastErrorAt == nil {
		t.Fatalf("state %+v", s)
	}
	if !strings.Contains(buf.String(), "upstream breaker state changed") {
		t.Fatalf("no breaker log: %s", buf.String())
	}
}

func TestRedactor(t *testing.T) {
	dead := deadURL(t)
	u := Upstream{Name: "x", URL: dead + "/v2/SECRETKEY123?apikey=QUERYSECRET", Headers: map[string]string{"A": "Bearer TOKENSECRET"}}
	n, parsed, err := normalize(u, KindProvider, 137)
	must(t, err)
	r := newRedactor(parsed, n.Headers)
	msg := r.redact(`Post "` + n.URL + `": echo TOKENSECRET and https://bob:pa55word@other.example/x`)
	assertNoSecret(t, "redact", msg)
	if !strings.Contains(msg, dead) || !strings.Contains(msg, "other.example") {
		t.Fatalf("over-redacted: %s", msg)
	}
}
