//go:build !crashhooks

// Package crashhook marks the points where the crash tests kill settlementd.
// In a normal build Point does nothing and compiles away; the tests build the
// binary with -tags crashhooks (crashhook_on.go), where a point configured in
// TOLLGATE_CRASH_HOOK blocks forever, so the test can SIGKILL the process at
// exactly that moment.
package crashhook

// Point is a named place in the code where a crash is interesting.
func Point(name string) {}
