package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollgate-rpc/tollgate/settlementd/internal/settletest"
)

// One wallet cannot pile up challenges: the 11th unused one is refused.
func TestChallengeCapPerWallet(t *testing.T) {
	_, pool := settletest.DB(t)
	s, err := New(Config{Pool: pool, Secret: []byte(strings.Repeat("s", 32))})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	post := func(body string) int {
		resp, err := http.Post(srv.URL+"/api/auth/challenge", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range MaxOpenChallenges {
		if c := post(`{"wallet":"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"}`); c != 200 {
			t.Fatalf("challenge %d: %d", i, c)
		}
	}
	if c := post(`{"wallet":"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"}`); c != http.StatusTooManyRequests {
		t.Fatalf("challenge over the cap: %d", c)
	}
	if c := post(`{"wallet":"0x0000000000000000000000000000000000000001"}`); c != 200 {
		t.Fatalf("another wallet: %d", c)
	}
	for body, want := range map[string]int{`{"wallet":"0x12"}`: 400, `{"wallet":1}`: 400, `not json`: 400, `{"wallet":"0x0000000000000000000000000000000000000001","x":1}`: 400} {
		if c := post(body); c != want {
			t.Errorf("%s: %d, want %d", body, c, want)
		}
	}
}
