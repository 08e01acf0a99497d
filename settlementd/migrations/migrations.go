// Package migrations embeds settlementd's PostgreSQL schema and applies it
// with golang-migrate. Files are NNNN_name.up.sql / .down.sql; numbering
// blocks: 0001–0009 core (ledger, events, epochs), 0010–0019 chain jobs
// (deposits, settlement, solvency), 0020+ later features.
package migrations

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // pgx5:// driver
	"github.com/golang-migrate/migrate/v4/source/iofs"
)

//go:embed *.sql
var files embed.FS

// Up applies every pending migration to the database at dsn (a postgres://
// URL). It is safe to run from several replicas at once: golang-migrate takes
// a Postgres advisory lock for the duration. Only one replica should
// (TOLLGATE_MIGRATE on one, or `settlementd migrate up` before the upgrade):
// see docs/operators.md, "Upgrades".
func Up(dsn string) error {
	m, err := open(dsn)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrations: up: %w", err)
	}
	return nil
}

// Version reports the applied schema version.
func Version(dsn string) (uint, bool, error) {
	m, err := open(dsn)
	if err != nil {
		return 0, false, err
	}
	defer m.Close()
	return m.Version()
}

func open(dsn string) (*migrate.Migrate, error) {
	src, err := iofs.New(files, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, driverURL(dsn))
	if err != nil {
		return nil, fmt.Errorf("migrations: open: %w", err)
	}
	return m, nil
}

// Migration is one embedded migration.
type Migration struct {
	Version uint
	Name    string // the file name without .up.sql
}

// All lists the embedded migrations, oldest first.
func All() []Migration {
	ents, _ := files.ReadDir(".")
	var out []Migration
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".up.sql")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			continue
		}
		out = append(out, Migration{Version: uint(v), Name: name})
	}
	slices.SortFunc(out, func(a, b Migration) int { return cmp.Compare(a.Version, b.Version) })
	return out
}

// Latest is the newest embedded migration's version: the schema this
// binary needs.
func Latest() uint {
	all := All()
	return all[len(all)-1].Version
}

// State is a database's schema against this binary's migrations.
type State struct {
	Version uint // applied version (0: none)
	Dirty   bool // a migration to Version failed half-way: recover with force (docs/operators.md)
	Latest  uint // this binary's newest
	// Pending are this binary's migrations newer than Version.
	Pending []Migration
}

// Behind: this binary needs migrations the database does not have.
func (s State) Behind() bool { return s.Version < s.Latest }

// Ahead: a newer release migrated the database (fine during a rolling
// upgrade: migrations only add, so the old binary keeps working).
func (s State) Ahead() bool { return s.Version > s.Latest }

func (s State) String() string {
	st := fmt.Sprintf("schema version %d", s.Version)
	if s.Dirty {
		st += " (DIRTY: migration " + strconv.FormatUint(uint64(s.Version), 10) + " failed half-way; fix its cause, then `settlementd migrate force <last good version>` and `settlementd migrate up`)"
	}
	st += fmt.Sprintf("; this settlementd's newest is %d", s.Latest)
	switch {
	case len(s.Pending) > 0:
		names := make([]string, len(s.Pending))
		for i, p := range s.Pending {
			names[i] = p.Name
		}
		st += fmt.Sprintf("; %d pending: %s", len(s.Pending), strings.Join(names, ", "))
	case s.Ahead():
		st += "; the database is newer (a later release migrated it)"
	default:
		st += "; up to date"
	}
	return st
}

// Status reads the database's schema state.
func Status(dsn string) (State, error) {
	m, err := open(dsn)
	if err != nil {
		return State{}, err
	}
	defer m.Close()
	v, dirty, err := m.Version()
	if err != nil && !errors.Is(err, migrate.ErrNilVersion) {
		return State{}, fmt.Errorf("migrations: version: %w", err)
	}
	s := State{Version: v, Dirty: dirty, Latest: Latest()}
	for _, mg := range All() {
		if mg.Version > v {
			s.Pending = append(s.Pending, mg)
		}
	}
	return s, nil
}

// Force records version v as applied and clean, without running anything:
// the recovery after a failed migration, once its cause is fixed (v is the
// last version that applied fully, or -1 for none).
func Force(dsn string, v int) error {
	if v != -1 {
		known := false
		for _, mg := range All() {
			known = known || mg.Version == uint(v)
		}
		if !known {
			return fmt.Errorf("migrations: force %d: no such migration (settlementd migrate status lists them)", v)
		}
	}
	m, err := open(dsn)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Force(v); err != nil {
		return fmt.Errorf("migrations: force %d: %w", v, err)
	}
	return nil
}

// To migrates up or down to version v (tests build an earlier release's
// schema with it).
func To(dsn string, v uint) error {
	m, err := open(dsn)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Migrate(v); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrations: to %d: %w", v, err)
	}
	return nil
}

// driverURL turns a postgres:// DSN into the pgx5:// form golang-migrate's
// pgx/v5 driver registers.
func driverURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return dsn
	}
	u.Scheme = "pgx5"
	return strings.Replace(u.String(), "postgresql://", "pgx5://", 1)
}
