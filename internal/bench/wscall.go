package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// runWSCalls is runWrk for a WebSocket setup (s.ws): conc sockets, each
// opened with the setup's API key, each sending the call and waiting for
// its answer, again and again for d. An answer carrying "error" counts as
// a non-2xx (Status), a broken socket as a read error, so the run fails as
// a wrk run with errors does.
func runWSCalls(ctx context.Context, s setup, conc int, d time.Duration) (result, error) {
	msg := body
	if s.body != "" {
		msg = s.body
	}
	hdr := http.Header{}
	if s.key != "" {
		hdr.Set("X-API-Key", s.key)
	}
	url := "ws" + strings.TrimPrefix(s.url, "http")
	conns := make([]*websocket.Conn, conc)
	for i := range conns {
		ws, _, err := websocket.DefaultDialer.DialContext(ctx, url, hdr)
		if err != nil {
			for _, c := range conns[:i] {
				_ = c.Close()
			}
			return result{}, err
		}
		conns[i] = ws
	}
	var mu sync.Mutex
	var r result
	var lat []float64
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, ws := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ws.Close()
			var mine []float64
			var n, bad, broken int64
			for time.Now().Before(deadline) {
				t0 := time.Now()
				_ = ws.SetWriteDeadline(t0.Add(10 * time.Second))
				if err := ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
					broken++
					break
				}
				_ = ws.SetReadDeadline(t0.Add(10 * time.Second))
				_, b, err := ws.ReadMessage()
				if err != nil {
					broken++
					break
				}
				mine = append(mine, float64(time.Since(t0).Microseconds()))
				n++
				if strings.Contains(string(b), `"error"`) {
					bad++
				}
			}
			mu.Lock()
			r.Requests += n
			r.Status += bad
			r.Read += broken
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.DurationUs = time.Since(start).Microseconds()
	slices.Sort(lat)
	at := func(q float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(q*float64(len(lat))))]
	}
	r.P50Us, r.P90Us, r.P99Us, r.P999Us = at(0.5), at(0.9), at(0.99), at(0.999)
	return r, nil
}
