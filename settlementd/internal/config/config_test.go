package config

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

const dsn = "postgres://u:secret@db:5432/t"

func TestPrecedenceFlagsEnvFileDefaults(t *testing.T) {
	dir := t.TempDir()
	yml := filepath.Join(dir, "s.yaml")
	os.WriteFile(yml, []byte("ingest-batch: 300\nepoch-grace: 7s\nprefix: \"file:\"\nmigrate: false\nhttp-addr: 127.0.0.1:9\n"), 0o600)
	c, err := Load([]string{"-config", yml, "-prefix", "flag:"}, env(map[string]string{
		"DATABASE_URL": dsn, "TOLLGATE_EPOCH_GRACE": "9s", "TOLLGATE_PREFIX": "env:",
	}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Prefix != "flag:" || c.EpochGrace != 9*time.Second || c.IngestBatch != 300 || c.Migrate ||
		c.HTTPAddr != "127.0.0.1:9" || c.ClaimMinIdle != 30*time.Second || c.DatabaseURL != dsn {
		t.Fatalf("%+v", c)
	}
	if c.Stream() != "flag:events" {
		t.Fatal(c.Stream())
	}

	js := filepath.Join(dir, "s.json")
	os.WriteFile(js, []byte(`{"ingest-workers": 4, "database-url": "`+dsn+`", "apply": true}`), 0o600)
	c, err = Load(nil, env(map[string]string{"TOLLGATE_CONFIG": js}), &bytes.Buffer{})
	if err != nil || c.IngestWorkers != 4 || !c.Apply || c.Consumer == "" {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestRejectsBadSettings(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"ingest-btach": 1}`), 0o600)
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
	}{
		"no database":      {nil, nil},
		"unknown file key": {[]string{"-config", bad}, map[string]string{"DATABASE_URL": dsn}},
		"bad duration env": {nil, map[string]string{"DATABASE_URL": dsn, "TOLLGATE_EPOCH_GRACE": "soon"}},
		"zero batch":       {[]string{"-ingest-batch", "0"}, map[string]string{"DATABASE_URL": dsn}},
		"zero gc percent":  {nil, map[string]string{"DATABASE_URL": dsn, "TOLLGATE_GC_PERCENT": "0"}},
		"stray argument":   {[]string{"extra"}, map[string]string{"DATABASE_URL": dsn}},
	} {
		if _, err := Load(tc.args, env(tc.env), &bytes.Buffer{}); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error quotes the password: %v", name, err)
		}
	}
	if _, err := Load([]string{"-database-url", "postgres://u:secret@[::1"}, env(nil), &bytes.Buffer{}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad DSN: %v", err)
	}
}

// -h documents every option with its environment variable.
func TestHelpListsEveryOption(t *testing.T) {
	var out bytes.Buffer
	if _, err := Load([]string{"-h"}, env(nil), &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	for _, want := range []string{"migrate", "reconcile", "version", "-database-url", "DATABASE_URL", "REDIS_URL",
		"-ingest-batch", "TOLLGATE_INGEST_BATCH", "-epoch-grace", "-claim-min-idle", "-leader-heartbeat", "-config"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
	lines := strings.Split(out.String(), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "-") && i+1 < len(lines) && !strings.Contains(lines[i+1], "(env ") {
			t.Errorf("option %s has no environment variable", strings.TrimSpace(l))
		}
	}
	if d := (&Config{DatabaseURL: dsn, RedisURL: "redis://:pw@r:6379/2"}).Describe(); strings.Contains(d["database"]+d["redis"], "secret") ||
		strings.Contains(d["redis"], "pw") || d["database"] != "db:5432/t" {
		t.Fatalf("describe leaks or misreports: %v", d)
	}
}

// A cluster URL (addr= seeds, or -redis-cluster) is read with
// ParseClusterURL; a single-node URL stays one stream per deployment, and
// every shard gets its own stream.
func TestRedisClusterAndShards(t *testing.T) {
	base := map[string]string{"DATABASE_URL": "postgres://u@h/db"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := Load(nil, env(with("REDIS_URL", "redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002",
		"TOLLGATE_REDIS_SHARDS", "3", "TOLLGATE_PREFIX", "tg:")), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Cluster() {
		t.Fatal("a URL with addr= seeds is a cluster URL")
	}
	if s := c.Streams(); len(s) != 3 || s[0] == s[1] || s[1] == s[2] {
		t.Fatalf("streams of 3 shards: %v", s)
	}
	c, err = Load(nil, env(with("REDIS_URL", "redis://127.0.0.1:6379/0")), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster() || len(c.Streams()) != 1 || c.Streams()[0] != c.Stream() {
		t.Fatalf("single node: cluster %v, streams %v", c.Cluster(), c.Streams())
	}
	// ParseURL rejects addr=; a cluster URL must not be read as one.
	if _, err := Load(nil, env(with("REDIS_URL", "redis://127.0.0.1:7000?addr=127.0.0.1:7001", "TOLLGATE_REDIS_CLUSTER", "false")), &bytes.Buffer{}); err != nil {
		t.Fatalf("cluster URL without the flag: %v", err)
	}
	if _, err := Load(nil, env(with("TOLLGATE_REDIS_SHARDS", "0")), &bytes.Buffer{}); err == nil {
		t.Fatal("redis-shards 0 accepted")
	}
}

// The daemon's GC target: 400 by default, the option when given, and a GOGC
// variable wins over both (the runtime has already applied it).
func TestGCPercent(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		percent int
		fromEnv bool
	}{
		{map[string]string{"DATABASE_URL": dsn}, 400, false},
		{map[string]string{"DATABASE_URL": dsn, "TOLLGATE_GC_PERCENT": "150"}, 150, false},
		{map[string]string{"DATABASE_URL": dsn, "GOGC": "off"}, 400, true},
	} {
		c, err := Load(nil, env(tc.env), &bytes.Buffer{})
		if err != nil || c.GCPercent != tc.percent || c.GOGCFromEnv != tc.fromEnv {
			t.Errorf("%v: gc-percent %d, GOGC from env %v, %v", tc.env, c.GCPercent, c.GOGCFromEnv, err)
		}
	}
}

// The chains file is read at Load: a good one adds its chains, a bad one
// stops settlementd with an error naming the file and the chain.
func TestChainsFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "chains.json")
	if err := os.WriteFile(good, []byte(`{"chains":[{"id":31337,"name":"devchain","block_time":"1s","finality":2}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(nil, env(map[string]string{"DATABASE_URL": dsn, "TOLLGATE_CHAINS_FILE": good}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Chains.ByID(31337); !ok || c.Chains.Default().ID != 137 || c.Describe()["chains"] != "137, 1, 42161, 8453, 80002, 31337" {
		t.Fatalf("chains %s", c.Chains.IDs())
	}
	c, err = Load(nil, env(map[string]string{"DATABASE_URL": dsn}), io.Discard)
	if err != nil || c.Chains.Len() != 5 {
		t.Fatalf("without a file: %v %v", c.Chains, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"chains":[{"id":10,"name":"optimism","block_time":"2s","finality":"tag","explorer":"http://x.io"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load([]string{"-chains-file", bad}, env(map[string]string{"DATABASE_URL": dsn}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "bad.json: chain 10 (optimism): explorer \"http://x.io\" must be an https:// URL") {
		t.Fatalf("bad file: %v", err)
	}
}
