package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agora-etl/agora/internal/pgtest"
)

func TestCreateIfMissingRetriesALostRaceOnce(t *testing.T) {
	race := &pgconn.PgError{Code: "42710", Message: `type "agora_fencing" already exists`}
	other := &pgconn.PgError{Code: "42501", Message: "permission denied for schema public"}
	for _, tc := range []struct {
		name    string
		replies []error // what each run of the statement returns
		want    error
		runs    int
	}{
		{"created", []error{nil}, nil, 1},
		{"row type race, then there", []error{race, nil}, nil, 2},
		{"catalog unique index race", []error{&pgconn.PgError{Code: "23505"}, nil}, nil, 2},
		{"duplicate table race", []error{&pgconn.PgError{Code: "42P07"}, nil}, nil, 2},
		{"a type of that name, not the table", []error{race, race}, race, 2},
		{"another error is not retried", []error{other, nil}, other, 1},
		{"a wrapped race is retried", []error{errors.Join(errors.New("exec"), race), nil}, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := 0
			err := createIfMissing(func() error {
				runs++
				return tc.replies[runs-1]
			})
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if runs != tc.runs {
				t.Errorf("ran the statement %d times, want %d", runs, tc.runs)
			}
		})
	}
}

// Replicas' first runs on a new database create the fencing tables at the
// same moment; none of them may fail for it (a failed first run backs the
// pipeline off fleet-wide).
func TestEnsureFencingConcurrentFirstRuns(t *testing.T) {
	const sessions, databases = 6, 8
	srv := pgtest.Shared(t)
	ctx := context.Background()
	for range databases {
		url := srv.NewDatabase(t)
		conns := make([]*pgx.Conn, sessions)
		for i := range conns {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			conns[i] = c
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, sessions)
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = ensureFencing(ctx, c)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("session %d of %d: %v", i+1, sessions, err)
			}
		}
	}
}
