//go:build crashhooks

package crashhook

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// TOLLGATE_CRASH_HOOK is "<point>:<n>": the n-th time (1-based) the point is
// reached, Point writes "<point>:<n>" to the file TOLLGATE_CRASH_HOOK_FILE and
// blocks forever, waiting for the test to kill the process.
var (
	mu    sync.Mutex
	hits  = map[string]int{}
	point string
	nth   int
)

func init() {
	name, n, ok := strings.Cut(os.Getenv("TOLLGATE_CRASH_HOOK"), ":")
	if !ok {
		return
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 1 {
		panic("crashhook: bad TOLLGATE_CRASH_HOOK " + os.Getenv("TOLLGATE_CRASH_HOOK"))
	}
	point, nth = name, i
}

// Point blocks forever the configured time it is reached.
func Point(name string) {
	if name != point {
		return
	}
	mu.Lock()
	hits[name]++
	hit := hits[name] == nth
	mu.Unlock()
	if !hit {
		return
	}
	marker := fmt.Sprintf("%s:%d", name, nth)
	if f := os.Getenv("TOLLGATE_CRASH_HOOK_FILE"); f != "" {
		_ = os.WriteFile(f, []byte(marker), 0o644)
	}
	fmt.Fprintln(os.Stderr, "crashhook: blocked at", marker)
	select {}
}
