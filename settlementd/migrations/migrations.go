// Package migrations embeds settlementd's PostgreSQL schema and applies it
// with golang-migrate. Files are NNNN_name.up.sql / .down.sql; numbering
// blocks: 0001–0009 core (ledger, events, epochs), 0010–0019 chain jobs
// (deposits, settlement, solvency), 0020+ later features.
package migrations

import (
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // pgx5:// driver
	"github.com/golang-migrate/migrate/v4/source/iofs"
)

//go:embed *.sql
var files embed.FS

// Up applies every pending migration to the database at dsn (a postgres://
// URL). It is safe to run from several replicas at once: golang-migrate takes
// a Postgres advisory lock for the duration.
func Up(dsn string) error {
	src, err := iofs.New(files, ".")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, driverURL(dsn))
	if err != nil {
		return fmt.Errorf("migrations: open: %w", err)
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrations: up: %w", err)
	}
	return nil
}

// Version reports the applied schema version.
func Version(dsn string) (uint, bool, error) {
	src, err := iofs.New(files, ".")
	if err != nil {
		return 0, false, err
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, driverURL(dsn))
	if err != nil {
		return 0, false, err
	}
	defer m.Close()
	return m.Version()
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
