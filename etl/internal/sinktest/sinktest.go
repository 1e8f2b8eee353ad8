// Package sinktest is the behaviour both database sinks must have, written
// once and run by each sink's tests against a real database: fencing
// (including two writers racing with interleaved tokens), the slot ledger
// (RunSlots), per-row rejections, batch-level rollback, upsert and
// unfenced runs.
package sinktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/runtime"
)

// Config is what the suite sets on a sink; each database maps it onto its
// own SinkConfig.
type Config struct {
	Table          string
	Columns        []string
	Mode           string
	Key            []string
	Resource       string
	CreateTable    bool
	AllowUnfenced  bool
	OnUnknownField string
	SlotColumn     string
	// Now, when set, is the clock of the sink's kept table columns.
	Now func() time.Time
}

// DB is a database under test.
type DB struct {
	// NewSink builds a sink writing to the database.
	NewSink func(t testing.TB, cfg Config) etl.Sink
	// Exec runs a statement.
	Exec func(t testing.TB, sql string)
	// Ints runs a query whose rows are one integer each.
	Ints func(t testing.TB, sql string) []int64
	// Strings runs a query whose rows are one text each.
	Strings func(t testing.TB, sql string) []string
	// AutoID is the column definition of an id numbered in insert order.
	AutoID string
	// FencedTx runs the database's FencedTx on resource with token and
	// opts; its fn inserts v into the table named resource (one column v),
	// and for v < 0 then fails.
	FencedTx func(ctx context.Context, resource string, token, v int64, opts ...fencing.TxOption) error
	// CompleteSlot runs the database's CompleteSlot.
	CompleteSlot func(ctx context.Context, resource string, token int64) error
	// BeforeCommit makes sink (one NewSink built) call fn inside each write
	// transaction, after the rows and before the commit (nil: nothing).
	BeforeCommit func(sink etl.Sink, fn func())
}

// Leased returns a context carrying a fenced lease with token.
func Leased(token int64) context.Context {
	return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "sinktest", WorkerID: "w", RunNumber: 1767225600, FencingToken: token})
}

// Rows returns n records {writer, token, n} for the race tables.
func Rows(writer string, token int64, n int) []etl.Record {
	recs := make([]etl.Record, n)
	for i := range recs {
		recs[i] = etl.Record{"writer": writer, "token": token, "n": int64(i)}
	}
	return recs
}

// Run runs every test of the suite as subtests of t.
func Run(t *testing.T, db DB) {
	t.Run("InterleavedTokens", func(t *testing.T) { InterleavedTokens(t, db) })
	t.Run("ConcurrentWritersRace", func(t *testing.T) { ConcurrentWritersRace(t, db) })
	t.Run("RejectionsAndRollback", func(t *testing.T) { RejectionsAndRollback(t, db) })
	t.Run("RejectionsFailingTheRunWriteNothing", func(t *testing.T) { RejectionsFailingTheRunWriteNothing(t, db) })
	t.Run("Upsert", func(t *testing.T) { Upsert(t, db) })
	t.Run("Unfenced", func(t *testing.T) { Unfenced(t, db) })
	t.Run("CreateTableAllFields", func(t *testing.T) { CreateTableAllFields(t, db) })
	t.Run("UnknownFields", func(t *testing.T) { UnknownFields(t, db) })
	t.Run("UnknownFieldsCreateTable", func(t *testing.T) { UnknownFieldsCreateTable(t, db) })
	RunRunEnd(t, db)
}

func raceTable(t testing.TB, db DB, name string) etl.Sink {
	db.Exec(t, fmt.Sprintf("CREATE TABLE %s (id %s, writer text NOT NULL, token bigint NOT NULL, n bigint NOT NULL)", name, db.AutoID))
	return db.NewSink(t, Config{Table: name, Columns: []string{"writer", "token", "n"}})
}

// InterleavedTokens: an old writer keeps writing after a new one took
// over; from the new writer's first commit on, every batch of the old one
// is refused and none of its rows lands.
func InterleavedTokens(t *testing.T, db DB) {
	sink := raceTable(t, db, "interleaved")
	old, cur := Leased(100), Leased(200)
	before := fencing.Refusals()
	steps := []struct {
		ctx    context.Context
		writer string
		token  int64
		n      int
		stale  bool
	}{
		{old, "old", 100, 3, false},
		{old, "old", 100, 2, false}, // same token, next batch: accepted
		{cur, "new", 200, 4, false},
		{old, "old", 100, 5, true},
		{cur, "new", 200, 2, false},
		{old, "old", 100, 1, true},
	}
	for i, s := range steps {
		err := sink.Write(s.ctx, Rows(s.writer, s.token, s.n))
		if s.stale {
			var stale *fencing.StaleWriterError
			if !errors.Is(err, fencing.ErrStaleWriter) || !errors.As(err, &stale) || stale.Token != 100 || stale.Stored != 200 {
				t.Fatalf("step %d: err = %v, want a stale writer error 100 < 200", i, err)
			}
		} else if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if got := fencing.Refusals() - before; got != 2 {
		t.Errorf("refusals counted: %d, want 2", got)
	}
	if got := db.Ints(t, "SELECT count(*) FROM interleaved WHERE writer = 'old'"); got[0] != 5 {
		t.Errorf("old writer's rows: %d, want exactly the 5 written before the takeover", got[0])
	}
	if got := db.Ints(t, "SELECT count(*) FROM interleaved WHERE writer = 'new'"); got[0] != 6 {
		t.Errorf("new writer's rows: %d, want 6", got[0])
	}
	if got := db.Ints(t, "SELECT token FROM agora_fencing WHERE resource = 'interleaved'"); len(got) != 1 || got[0] != 200 {
		t.Errorf("stored token: %v, want [200]", got)
	}
}

// ConcurrentWritersRace: writers take newer and newer tokens while older
// holders keep writing, all at once through one sink. Committed tokens
// never decrease in commit order, every accepted batch landed whole, and
// no refused one left a row.
func ConcurrentWritersRace(t *testing.T, db DB) {
	sink := raceTable(t, db, "race")
	const writers, batches, perBatch = 4, 25, 7
	var tokens atomic.Int64
	tokens.Store(1000)
	var accepted, refused atomic.Int64
	var mu sync.Mutex
	acceptedBy := map[int64]int64{} // token → rows accepted
	before := fencing.Refusals()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := tokens.Add(1)
			for b := range batches {
				if b%5 == 4 {
					token = tokens.Add(1) // this writer took the lease over again
				}
				err := sink.Write(Leased(token), Rows(fmt.Sprintf("w%d", w), token, perBatch))
				switch {
				case err == nil:
					accepted.Add(perBatch)
					mu.Lock()
					acceptedBy[token] += perBatch
					mu.Unlock()
				case errors.Is(err, fencing.ErrStaleWriter):
					refused.Add(1)
				default:
					t.Errorf("writer %d batch %d: %v", w, b, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got := db.Ints(t, "SELECT token FROM race ORDER BY id")
	if int64(len(got)) != accepted.Load() {
		t.Fatalf("rows in the table: %d, accepted: %d", len(got), accepted.Load())
	}
	if !slices.IsSorted(got) {
		t.Fatalf("a lower token committed after a higher one: %v", got)
	}
	landed := map[int64]int64{}
	for _, tok := range got {
		landed[tok]++
	}
	for tok, n := range acceptedBy {
		if landed[tok] != n {
			t.Errorf("token %d: %d rows landed, %d accepted", tok, landed[tok], n)
		}
		delete(landed, tok)
	}
	if len(landed) != 0 {
		t.Errorf("rows of batches never accepted: %v", landed)
	}
	if r := fencing.Refusals() - before; r != refused.Load() {
		t.Errorf("refusals counted: %d, errors returned: %d", r, refused.Load())
	}
	if refused.Load() == 0 {
		t.Log("no batch was refused in this interleaving")
	}
	t.Logf("%d rows accepted, %d batches refused", accepted.Load(), refused.Load())
}

// RejectionsAndRollback: rows the database refuses one by one are reported
// by index and the others committed; a batch-level failure commits
// nothing, not even the fencing token.
func RejectionsAndRollback(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE rej (id bigint PRIMARY KEY, qty bigint NOT NULL CHECK (qty >= 0))")
	sink := db.NewSink(t, Config{Table: "rej", Columns: []string{"id", "qty"}})
	batch := []etl.Record{
		{"id": 1, "qty": 5},
		{"id": 2, "qty": -1}, // check constraint
		{"id": 3, "qty": 7},
		{"id": 1, "qty": 9},   // duplicate primary key
		{"id": 4, "qty": nil}, // not null
		{"id": 5, "qty": 0},
	}
	err := sink.Write(Leased(10), batch)
	var rej *etl.RejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("err = %v, want *etl.RejectedError", err)
	}
	var idx []int
	for _, r := range rej.Rejections {
		idx = append(idx, r.Index)
		if r.Err == nil {
			t.Errorf("rejection %d has no error", r.Index)
		}
	}
	if !slices.Equal(idx, []int{1, 3, 4}) {
		t.Fatalf("rejected indexes %v, want [1 3 4]", idx)
	}
	if got := db.Ints(t, "SELECT id * 100 + qty FROM rej ORDER BY id"); !slices.Equal(got, []int64{105, 307, 500}) {
		t.Fatalf("rows after rejections: %v, want 1/5, 3/7, 5/0", got)
	}

	// A batch-level failure: a column that does not exist.
	bad := db.NewSink(t, Config{Table: "rej", Columns: []string{"id", "qty", "nope"}})
	err = bad.Write(Leased(30), []etl.Record{{"id": 6, "qty": 1, "nope": 1}, {"id": 7, "qty": 1, "nope": 1}})
	if err == nil || errors.As(err, &rej) {
		t.Fatalf("unknown column: err = %v, want a batch-level error", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM rej WHERE id >= 6"); got[0] != 0 {
		t.Fatalf("a failed batch left %d rows", got[0])
	}
	if got := db.Ints(t, "SELECT token FROM agora_fencing WHERE resource = 'rej'"); len(got) != 1 || got[0] != 10 {
		t.Fatalf("a failed batch changed the stored token: %v, want [10]", got)
	}
	if err := sink.Write(Leased(20), []etl.Record{{"id": 6, "qty": 1}}); err != nil {
		t.Fatalf("token 20 after the failed token-30 batch: %v", err)
	}
}

// RejectionsFailingTheRunWriteNothing: when a rejection fails the run (the
// pipeline has no dead-letter queue: etl.RejectsFailRun), a batch with a
// record the database refuses, or one with a field the table lacks, writes
// none of its rows, and still names the refused records; the same batch
// without the mark writes the others.
func RejectionsFailingTheRunWriteNothing(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE rejall (id bigint PRIMARY KEY, qty bigint NOT NULL CHECK (qty >= 0))")
	sink := db.NewSink(t, Config{Table: "rejall", OnUnknownField: "reject"})
	batch := []etl.Record{{"id": 1, "qty": 5}, {"id": 2, "qty": -1}, {"id": 3, "qty": 7}}
	err := sink.Write(etl.WithRejectsFailRun(Leased(10)), batch)
	var rej *etl.RejectedError
	if !errors.As(err, &rej) || len(rej.Rejections) != 1 || rej.Rejections[0].Index != 1 {
		t.Fatalf("err = %v, want record 1 rejected", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM rejall"); got[0] != 0 {
		t.Fatalf("a batch whose rejection fails the run left %d rows", got[0])
	}
	err = sink.Write(etl.WithRejectsFailRun(Leased(10)), []etl.Record{{"id": 4, "qty": 1}, {"id": 5, "qty": 1, "extra": 1}})
	if !errors.As(err, &rej) || len(rej.Rejections) != 1 || rej.Rejections[0].Index != 1 {
		t.Fatalf("unknown field: err = %v, want record 1 rejected", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM rejall"); got[0] != 0 {
		t.Fatalf("a batch with a field the table lacks left %d rows", got[0])
	}
	if err := sink.Write(Leased(10), batch); !errors.As(err, &rej) {
		t.Fatalf("without the mark: err = %v, want rejections", err)
	}
	if got := db.Ints(t, "SELECT id FROM rejall ORDER BY id"); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("without the mark the others are written: got %v, want [1 3]", got)
	}
}

// Upsert: rows are replaced by key, also when one batch has a key twice
// (the later record wins).
func Upsert(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE up (id bigint PRIMARY KEY, name text NOT NULL, note text)")
	sink := db.NewSink(t, Config{Table: "up", Mode: "upsert", Key: []string{"id"}, Columns: []string{"id", "name"}})
	ctx := Leased(5)
	if err := sink.Write(ctx, []etl.Record{{"id": 1, "name": "a"}, {"id": 2, "name": "b"}}); err != nil {
		t.Fatal(err)
	}
	db.Exec(t, "UPDATE up SET note = 'kept' WHERE id = 1")
	if err := sink.Write(ctx, []etl.Record{{"id": 1, "name": "c"}, {"id": 1, "name": "d"}, {"id": 3, "name": "e"}}); err != nil {
		t.Fatal(err)
	}
	got := db.Strings(t, "SELECT cast(id AS text) || '=' || name || '/' || coalesce(note, '-') FROM up ORDER BY id")
	if want := []string{"1=d/kept", "2=b/-", "3=e/-"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

// Unfenced: a run without a fenced lease is refused unless allowed; an
// allowed one writes without touching the stored token.
func Unfenced(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE unf (id bigint)")
	strict := db.NewSink(t, Config{Table: "unf", Columns: []string{"id"}})
	local := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "p"})
	if err := strict.Write(local, []etl.Record{{"id": 1}}); !errors.Is(err, fencing.ErrUnfenced) {
		t.Fatalf("unfenced run: err = %v, want ErrUnfenced", err)
	}
	if err := strict.Write(context.Background(), []etl.Record{{"id": 1}}); !errors.Is(err, fencing.ErrUnfenced) {
		t.Fatalf("run without a lease: err = %v, want ErrUnfenced", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM unf"); got[0] != 0 {
		t.Fatalf("refused unfenced writes left %d rows", got[0])
	}
	if err := strict.Write(Leased(50), []etl.Record{{"id": 2}}); err != nil {
		t.Fatal(err)
	}
	loose := db.NewSink(t, Config{Table: "unf", Columns: []string{"id"}, AllowUnfenced: true})
	if err := loose.Write(local, []etl.Record{{"id": 3}}); err != nil {
		t.Fatalf("allowed unfenced run: %v", err)
	}
	if got := db.Ints(t, "SELECT id FROM unf ORDER BY id"); !slices.Equal(got, []int64{2, 3}) {
		t.Fatalf("rows %v, want [2 3]", got)
	}
	if got := db.Ints(t, "SELECT token FROM agora_fencing WHERE resource = 'unf'"); !slices.Equal(got, []int64{50}) {
		t.Fatalf("stored token %v, want [50]", got)
	}
}

// CreateTableAllFields: with no columns configured every field is written,
// and create_table makes the table from the first batch; a separate
// resource name fences independently of the table name.
func CreateTableAllFields(t *testing.T, db DB) {
	sink := db.NewSink(t, Config{Table: "made", CreateTable: true, Mode: "upsert", Key: []string{"id"}, Resource: "made-by-test"})
	recs := []etl.Record{{"id": 1, "name": "x", "price": 1.5}, {"id": 2, "name": "y"}}
	if err := sink.Write(Leased(7), recs); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(Leased(7), []etl.Record{{"id": 2, "name": "z", "price": 2}}); err != nil {
		t.Fatal(err)
	}
	if got := db.Strings(t, "SELECT name FROM made ORDER BY id"); !slices.Equal(got, []string{"x", "z"}) {
		t.Fatalf("names %v", got)
	}
	if got := db.Ints(t, "SELECT count(*) FROM made WHERE price IS NULL"); got[0] != 0 {
		t.Fatalf("%d rows lost their price", got[0])
	}
	if got := db.Ints(t, "SELECT token FROM agora_fencing WHERE resource = 'made-by-test'"); !slices.Equal(got, []int64{7}) {
		t.Fatalf("stored token under the resource name: %v", got)
	}
}
