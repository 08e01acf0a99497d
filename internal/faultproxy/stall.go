package faultproxy

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Stall is a TCP relay in front of a real Redis (or any request/reply
// server) that can stall replies mid-flight: a connection whose client
// bytes contain the armed pattern has everything the server sends back
// from then on held until Release. The server has received and run the
// command — for Redis, the metering script has booked — but the client
// never hears the outcome within its timeout: the lost reply the gateway
// voids. Only the matching connection stalls; the others pass.
type Stall struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	pattern []byte
	left    int           // connections the armed pattern may still hold; <0: any number
	gate    chan struct{} // closed: replies flow
	// Stalled counts the connections held by the armed pattern.
	Stalled atomic.Int64
}

// NewStall relays 127.0.0.1:<free port> to target until the test ends.
func NewStall(t testing.TB, target string) *Stall {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Stall{ln: ln, target: target, gate: make(chan struct{})}
	close(s.gate)
	t.Cleanup(func() { _ = ln.Close(); s.Release() })
	go s.serve()
	return s
}

// Addr is the relay's host:port.
func (s *Stall) Addr() string { return s.ln.Addr().String() }

// Arm makes the next connection that sends pattern stall its replies (the
// reply to the command carrying it included) until Release.
func (s *Stall) Arm(pattern []byte) { s.arm(pattern, -1) }

// ArmFirst is Arm for the first connection that sends pattern only: a
// client's retry on another connection passes.
func (s *Stall) ArmFirst(pattern []byte) { s.arm(pattern, 1) }

func (s *Stall) arm(pattern []byte, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pattern, s.left = bytes.Clone(pattern), n
	s.gate = make(chan struct{})
}

// Release lets every held reply through and disarms the pattern.
func (s *Stall) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pattern = nil
	select {
	case <-s.gate:
	default:
		close(s.gate)
	}
}

// match reports whether chunk (with the tail of the previous one, so a
// pattern split across reads is found) carries the armed pattern, and the
// gate a match waits on.
func (s *Stall) match(chunk []byte) (bool, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pattern) == 0 || s.left == 0 || !bytes.Contains(chunk, s.pattern) {
		return false, nil
	}
	if s.left > 0 {
		s.left--
	}
	return true, s.gate
}

func (s *Stall) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", s.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		var held atomic.Pointer[chan struct{}]
		go func() { // client → server: watch for the pattern before passing it on
			defer up.Close()
			buf := make([]byte, 64<<10)
			var tail []byte
			for {
				n, err := c.Read(buf)
				if n > 0 {
					// A connection held before and released may be
					// reused for the next armed pattern.
					if g := held.Load(); g == nil || isClosed(*g) {
						if ok, gate := s.match(append(tail, buf[:n]...)); ok {
							held.Store(&gate)
							s.Stalled.Add(1)
						}
						tail = append(tail[:0], buf[max(0, n-256):n]...)
					}
					if _, werr := up.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // server → client: held once the connection matched
			defer c.Close()
			defer up.Close()
			_, _ = io.Copy(writerFunc(func(p []byte) (int, error) {
				if g := held.Load(); g != nil {
					<-*g
				}
				return c.Write(p)
			}), up)
		}()
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
