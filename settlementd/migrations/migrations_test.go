package migrations

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tollgate-rpc/tollgate/internal/testenv"
)

func TestUpIsIdempotent(t *testing.T) {
	dsn := testenv.Postgres(t)
	for range 2 {
		if err := Up(dsn); err != nil {
			t.Fatal(err)
		}
	}
	v, dirty, err := Version(dsn)
	if err != nil || dirty || v == 0 {
		t.Fatalf("version %d dirty %v err %v", v, dirty, err)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM settlement_meta`).Scan(&n); err != nil {
		t.Fatal(err)
	}
}
