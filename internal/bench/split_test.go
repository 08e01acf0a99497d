package main

import (
	"testing"

	"github.com/google/pprof/profile"
)

// Each sample goes to the innermost frame of code someone owns: a JSON
// decode the SDK calls is the SDK's, the core's Redis call under the SDK's
// tool dispatch is ours, a GC assist under our frames is ours and counted
// apart, and the pipeline goroutine is ours but not the call's.
func TestSplitGivesEachSampleToItsInnermostOwner(t *testing.T) {
	fns := map[string]*profile.Function{}
	loc := func(names ...string) []*profile.Location {
		// names leaf first
		var out []*profile.Location
		for _, n := range names {
			f := fns[n]
			if f == nil {
				f = &profile.Function{ID: uint64(len(fns) + 1), Name: n}
				fns[n] = f
			}
			out = append(out, &profile.Location{ID: uint64(len(out) + 1), Line: []profile.Line{{Function: f}}})
		}
		return out
	}
	sample := func(ms int64, names ...string) *profile.Sample {
		return &profile.Sample{Value: []int64{1, ms * 1e6}, Location: loc(names...)}
	}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			sample(10, "runtime.mallocgc", "github.com/segmentio/encoding/json.(*Decoder).Decode", "github.com/modelcontextprotocol/go-sdk/mcp.applySchema",
				"github.com/modelcontextprotocol/go-sdk/mcp.(*Server).callTool"),
			sample(20, "syscall.Syscall", "github.com/redis/go-redis/v9.(*Client).Process", "github.com/tollgate-rpc/tollgate/caddymodule/core.(*Core).Serve",
				"github.com/tollgate-rpc/tollgate/caddymodule/mcp.(*Server).pay", "github.com/modelcontextprotocol/go-sdk/mcp.(*Server).callTool"),
			sample(5, "runtime.gcDrainN", "runtime.gcAssistAlloc", "runtime.mallocgc", "github.com/tollgate-rpc/tollgate/caddymodule/core.(*Core).Serve",
				"github.com/tollgate-rpc/tollgate/caddymodule/httprpc.(*Door).Serve", "github.com/tollgate-rpc/tollgate/caddymodule.(*Handler).ServeHTTP",
				"github.com/caddyserver/caddy/v2/modules/caddyhttp.(*Server).ServeHTTP"),
			sample(7, "syscall.Syscall", "github.com/tollgate-rpc/tollgate/shared/meter.(*AutoPipeline).flush"),
			sample(2, "runtime.copystack", "runtime.newstack", "github.com/tollgate-rpc/tollgate/caddymodule/relay.(*Relay).Forward",
				"github.com/tollgate-rpc/tollgate/caddymodule/core.(*Core).Serve", "github.com/tollgate-rpc/tollgate/caddymodule/mcp.(*Server).pay"),
			sample(3, "runtime.scanObject", "runtime.gcDrain", "runtime.gcBgMarkWorker"),
			sample(4, "runtime.memmove", "github.com/caddyserver/caddy/v2/modules/caddyhttp.(*Server).ServeHTTP", "net/http.(*conn).serve"),
			sample(6, "syscall.Syscall", "net/http.(*conn).readRequest", "net/http.(*conn).serve"),
		}}
	s, err := splitOf(p)
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if d := got - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %.3f s, want %.3f s", name, got, want)
		}
	}
	near("total", s.total, 0.057)
	near("sdk", s.sdk, 0.010)
	near("door", s.door, 0.027)
	near("doorAssist", s.doorAssist, 0.005)
	near("doorSys", s.doorSys, 0.020)
	near("doorStack", s.doorStack, 0.002)
	near("background", s.background, 0.007)
	near("caddy", s.caddy, 0.004)
	near("none", s.none, 0.009)
	near("gcBg", s.gcBg, 0.003)
}
