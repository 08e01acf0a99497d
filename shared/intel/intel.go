// Package intel is the wire format between settlementd, which polls
// perpetual-futures venues and builds the funding-rate heatmap, and the
// gateway, which serves it (GET /v1/intelligence/funding-rate-heatmap).
// settlementd publishes the latest Heatmap as JSON under LatestKey; the
// gateway only filters it, never computes on rates.
//
// Rates are integers in parts per billion (1e-9): the venues publish
// decimal strings with up to 8 decimals, parsed digit by digit (ParseRate),
// never through a float.
package intel

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// FundingHeatmap is the metric id (and path segment) of the funding-rate heatmap.
const FundingHeatmap = "funding-rate-heatmap"

// LatestKey is the Redis key holding the latest heatmap JSON under a
// deployment's key prefix (the gateway's key_prefix, settlementd's prefix).
func LatestKey(prefix string) string { return prefix + "intel:funding:latest" }

// Windows are the heatmap windows and their bucket widths, in order.
var Windows = []Window{
	{Name: "1h", Span: time.Hour, Bucket: 5 * time.Minute},
	{Name: "8h", Span: 8 * time.Hour, Bucket: 30 * time.Minute},
	{Name: "24h", Span: 24 * time.Hour, Bucket: time.Hour},
}

// DefaultWindow is used when the caller names none.
const DefaultWindow = "8h"

// Window is one heatmap window: Span/Bucket buckets.
type Window struct {
	Name   string
	Span   time.Duration
	Bucket time.Duration
}

// WindowByName finds a window.
func WindowByName(name string) (Window, bool) {
	for _, w := range Windows {
		if w.Name == name {
			return w, true
		}
	}
	return Window{}, false
}

// StaleAfter is how old data may get before it is labelled stale: three
// poll intervals.
func StaleAfter(poll time.Duration) time.Duration { return 3 * poll }

// Heatmap is the published document.
type Heatmap struct {
	GeneratedAt   time.Time              `json:"generated_at"`
	PollIntervalS int64                  `json:"poll_interval_seconds"`
	Symbols       []string               `json:"symbols"`
	Venues        map[string]VenueStatus `json:"venues"`
	Windows       map[string]Grid        `json:"windows"`
}

// VenueStatus is one venue's polling health.
type VenueStatus struct {
	LastSuccess *time.Time `json:"last_success"` // nil: never polled successfully
	LastAttempt *time.Time `json:"last_attempt"`
	LastError   string     `json:"last_error,omitempty"`
	Stale       bool       `json:"stale"`
}

// Grid is one window: bucket start times and, per symbol and venue, the
// rate of each bucket (the latest observation in it; nil: none).
type Grid struct {
	BucketSeconds int64                         `json:"bucket_seconds"`
	Buckets       []time.Time                   `json:"buckets"`
	Rates         map[string]map[string][]*Rate `json:"rates"` // symbol → venue → per bucket
}

// Rate is one cell: the rate in parts per billion and as a decimal string.
type Rate struct {
	PPB     int64  `json:"ppb"`
	Decimal string `json:"rate"`
}

// NewRate returns the cell for ppb.
func NewRate(ppb int64) *Rate { return &Rate{PPB: ppb, Decimal: FormatRate(ppb)} }

// ErrRate is wrapped by every ParseRate error.
var ErrRate = errors.New("invalid rate")

// ParseRate reads a signed decimal rate ("0.00010000", "-0.001212", "0")
// into parts per billion. It rejects exponents, spaces, empty parts, more
// than 9 significant decimals and values beyond ±1000 (no funding rate is).
func ParseRate(s string) (int64, error) {
	if s == "" || len(s) > 40 {
		return 0, fmt.Errorf("%w: %q", ErrRate, s)
	}
	neg := false
	body := s
	if body[0] == '-' || body[0] == '+' {
		neg = body[0] == '-'
		body = body[1:]
	}
	whole, frac, hasDot := strings.Cut(body, ".")
	if whole == "" || (hasDot && frac == "") || !isDigits(whole) || !isDigits(frac) {
		return 0, fmt.Errorf("%w: %q is not a decimal number", ErrRate, s)
	}
	if len(frac) > 9 {
		if strings.Trim(frac[9:], "0") != "" {
			return 0, fmt.Errorf("%w: %q has more than 9 decimals", ErrRate, s)
		}
		frac = frac[:9]
	}
	frac += strings.Repeat("0", 9-len(frac))
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > 1000 {
		return 0, fmt.Errorf("%w: %q is out of range", ErrRate, s)
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	v := w*1_000_000_000 + f
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w: %q is out of range", ErrRate, s)
	}
	if neg {
		v = -v
	}
	return v, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatRate renders ppb as a decimal without trailing zeros ("0.0001").
func FormatRate(ppb int64) string {
	sign := ""
	u := uint64(ppb)
	if ppb < 0 {
		sign, u = "-", uint64(-ppb)
	}
	s := fmt.Sprintf("%s%d.%09d", sign, u/1_000_000_000, u%1_000_000_000)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
