package main

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// Whose CPU a call spends: a CPU profile of the gateway under one setup's
// load, each sample given to the innermost frame of code someone owns
// (a profile that splits our share from the SDK's). Standard
// library and other libraries' frames (net/http, bufio, go-redis, the
// runtime's allocator) count for whoever called them; a sample with no
// owner's frame at all is the runtime's own (GC workers, the scheduler) or
// the HTTP server's loop (net/http reading requests and flushing answers).
//
//   - ours: github.com/tollgate-rpc (the doors, the core, the meter). Split
//     into the call's own goroutines (a door's stack: Handler.ServeHTTP,
//     the WebSocket door's loops, an MCP tool handler) and the background
//     goroutines that serve every call together (the meter's Redis
//     pipeline and event writer), whose cost per call falls as the call
//     rate rises (bigger pipelines). Of ours, the part inside
//     runtime.gcAssistAlloc is reported too: the mark work the collector
//     makes an allocating goroutine do, which depends on everyone's
//     allocation rate, not only ours; and the part in system calls (the
//     kernel's socket reads and writes), which the WebSocket door makes
//     itself but the /rpc door leaves to net/http's connection loop; and
//     the part growing the goroutine's stack (runtime.newstack): the MCP
//     SDK runs every tool call on a fresh goroutine with a small stack,
//     which whoever first calls deep pays to grow (the core, when the SDK
//     does not validate the arguments first), where /rpc runs on
//     net/http's connection goroutine, long since grown.
//   - sdk: the official MCP SDK and the libraries only it uses (its JSON
//     decoder, JSON Schema validation, URI templates).
//   - caddy: Caddy's HTTP server and routes.
type split struct {
	total                  float64 // sample seconds in the profile
	door, background       float64 // ours: the call's goroutines, the shared background ones
	doorAssist, bgAssist   float64 // of which inside runtime.gcAssistAlloc
	doorSys                float64 // of door (less doorAssist), in a system call
	doorStack              float64 // of door (less doorAssist), growing the stack
	sdk, caddy, none, gcBg float64 // gcBg: runtime.gcBgMarkWorker (part of none)
}

// owners maps a function-name prefix to its owner; the first match wins.
var owners = []struct{ prefix, owner string }{
	{"github.com/tollgate-rpc/", "ours"},
	{"github.com/modelcontextprotocol/", "sdk"},
	{"github.com/google/jsonschema-go/", "sdk"},
	{"github.com/segmentio/", "sdk"},
	{"github.com/yosida95/", "sdk"},
	{"github.com/caddyserver/", "caddy"},
}

// callRoots are our frames that put a sample on a call's own goroutine.
var callRoots = []string{
	"github.com/tollgate-rpc/tollgate/caddymodule.(*Handler).ServeHTTP",
	"github.com/tollgate-rpc/tollgate/caddymodule/wsrpc.",
	"github.com/tollgate-rpc/tollgate/caddymodule/mcp.",
}

func ownerOf(fn string) string {
	for _, o := range owners {
		if strings.HasPrefix(fn, o.prefix) {
			return o.owner
		}
	}
	return ""
}

// splitProfile reads a CPU profile and splits its samples.
func splitProfile(path string) (split, error) {
	f, err := os.Open(path)
	if err != nil {
		return split{}, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return split{}, err
	}
	return splitOf(p)
}

func splitOf(p *profile.Profile) (split, error) {
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			vi = i
		}
	}
	if vi < 0 {
		return split{}, fmt.Errorf("not a CPU profile (no cpu/nanoseconds sample type)")
	}
	var s split
	for _, smp := range p.Sample {
		v := float64(smp.Value[vi]) / 1e9
		s.total += v
		var owner string
		var assist, gcBg, call, sys, grow bool
		// Location[0] is the leaf; within a location, Line[0] is the
		// innermost inlined call.
		for _, loc := range smp.Location {
			for _, ln := range loc.Line {
				if ln.Function == nil {
					continue
				}
				fn := ln.Function.Name
				if owner == "" {
					owner = ownerOf(fn)
				}
				switch {
				case strings.HasPrefix(fn, "runtime.gcAssistAlloc"):
					assist = true
				case strings.HasPrefix(fn, "runtime.gcBgMarkWorker"):
					gcBg = true
				case strings.HasPrefix(fn, "runtime.newstack"):
					grow = true
				case strings.HasPrefix(fn, "syscall.") || strings.HasPrefix(fn, "internal/runtime/syscall.") || strings.HasPrefix(fn, "runtime/internal/syscall."):
					sys = true
				}
				if slices.ContainsFunc(callRoots, func(r string) bool { return strings.HasPrefix(fn, r) }) {
					call = true
				}
			}
		}
		if gcBg {
			s.gcBg += v
		}
		switch owner {
		case "ours":
			if call {
				s.door += v
				if assist {
					s.doorAssist += v
				} else if sys {
					s.doorSys += v
				} else if grow {
					s.doorStack += v
				}
			} else {
				s.background += v
				if assist {
					s.bgAssist += v
				}
			}
		case "sdk":
			s.sdk += v
		case "caddy":
			s.caddy += v
		default:
			s.none += v
		}
	}
	if s.total == 0 {
		return s, fmt.Errorf("the profile has no samples")
	}
	return s, nil
}

// profiled is one profiled measurement: the split and the run's CPU per
// request, which turns shares into µs.
type profiled struct {
	id    string
	round int
	cpuUs float64
	split split
}

// splitReport is the table of the profiled setups: each figure is µs of
// gateway CPU per request (the share of the profile's samples times the
// run's CPU per request), the median over the profiled rounds; "×" is ours
// on the call's goroutines against the /rpc call's ((c), or (c0) for a
// baseline setup) in the same run.
func splitReport(ps []profiled) string {
	if len(ps) == 0 {
		return ""
	}
	byID := map[string][]profiled{}
	var ids []string
	for _, p := range ps {
		if byID[p.id] == nil {
			ids = append(ids, p.id)
		}
		byID[p.id] = append(byID[p.id], p)
	}
	med := func(id string, f func(p profiled) float64) float64 {
		var xs []float64
		for _, p := range byID[id] {
			xs = append(xs, f(p))
		}
		if len(xs) == 0 {
			return 0
		}
		sort.Float64s(xs)
		if n := len(xs); n%2 == 0 {
			return (xs[n/2-1] + xs[n/2]) / 2
		}
		return xs[len(xs)/2]
	}
	us := func(part func(s split) float64) func(p profiled) float64 {
		return func(p profiled) float64 { return part(p.split) / p.split.total * p.cpuUs }
	}
	door := us(func(s split) float64 { return s.door })
	doorNoAssist := us(func(s split) float64 { return s.door - s.doorAssist })
	doorNoSys := us(func(s split) float64 { return s.door - s.doorAssist - s.doorSys })
	doorOwn := us(func(s split) float64 { return s.door - s.doorAssist - s.doorSys - s.doorStack })
	all := us(func(s split) float64 { return s.door + s.background })
	var b strings.Builder
	b.WriteString("\nWhose CPU (`BENCH_PROFILE=1`: each profile sample given to the innermost frame of code someone owns; " +
		"µs of gateway CPU per request, median over the profiled rounds; ours = the doors, the core and the meter; " +
		"\"call\" = on the call's own goroutines, \"+bg\" = with the meter's shared pipeline goroutines; " +
		"\"−assist\" = without runtime.gcAssistAlloc under our frames, \"−sys\" = and without system calls (socket I/O), \"−stack\" = and without growing a fresh goroutine's stack; × = against the /rpc call's ((c), or (c0) for a baseline setup) same column):\n\n")
	b.WriteString("| setup | rounds | CPU/req | ours, call | × | −assist | × | −assist −sys | × | −assist −sys −stack | × | ours +bg | × | SDK | Caddy | runtime & net/http (GC workers) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, id := range ids {
		ref := "c"
		if strings.HasSuffix(id, "0") {
			ref = "c0"
		}
		ratio := func(f func(p profiled) float64) string {
			if byID[ref] == nil {
				return "–"
			}
			return fmt.Sprintf("%.2f", med(id, f)/med(ref, f))
		}
		fmt.Fprintf(&b, "| (%s) | %d | %.1f | %.1f | %s | %.1f | %s | %.1f | %s | %.1f | %s | %.1f | %s | %.1f | %.1f | %.1f (%.1f) |\n",
			id, len(byID[id]), med(id, func(p profiled) float64 { return p.cpuUs }),
			med(id, door), ratio(door), med(id, doorNoAssist), ratio(doorNoAssist), med(id, doorNoSys), ratio(doorNoSys),
			med(id, doorOwn), ratio(doorOwn),
			med(id, all), ratio(all),
			med(id, us(func(s split) float64 { return s.sdk })), med(id, us(func(s split) float64 { return s.caddy })),
			med(id, us(func(s split) float64 { return s.none })), med(id, us(func(s split) float64 { return s.gcBg })))
	}
	return b.String()
}
