package sinktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
)

// childEnv carries the argument of a writer subprocess.
const childEnv = "AGORA_SINKTEST_CHILD"

// inTxMark is what a writer subprocess prints when it is inside its
// transaction with its rows written but not committed.
const inTxMark = "sinktest: in transaction"

// ChildArg returns the argument KillWriterMidTransaction gave this
// process, and whether it is such a writer subprocess.
func ChildArg() (string, bool) {
	v := os.Getenv(childEnv)
	return v, v != ""
}

// StopInTransaction is the hook a writer subprocess runs before its
// commit: it says so and waits to be killed.
func StopInTransaction() {
	fmt.Println(inTxMark)
	os.Stdout.Sync()
	select {}
}

// KillRows are the records the killed writer and its retry write: ids 1 to
// n, each with v = "v<id>".
func KillRows(n int) []etl.Record {
	recs := make([]etl.Record, n)
	for i := range recs {
		recs[i] = etl.Record{"id": int64(i + 1), "v": fmt.Sprintf("v%d", i+1)}
	}
	return recs
}

// KillWriterMidTransaction runs the test named test again in a subprocess
// of the test binary with ChildArg arg, waits until it reports being
// inside its transaction (StopInTransaction), and kills it with SIGKILL,
// as a crashed worker dies.
func KillWriterMidTransaction(t *testing.T, test, arg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+arg)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var seen []string
	for sc.Scan() {
		if sc.Text() == inTxMark {
			break
		}
		seen = append(seen, sc.Text())
	}
	if sc.Err() != nil || ctx.Err() != nil || (len(seen) > 0 && seen[len(seen)-1] == inTxMark) {
		t.Fatalf("writer subprocess never reached its transaction: %v\nstdout: %s\nstderr: %s", sc.Err(), strings.Join(seen, "\n"), stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ProcessState.Sys() == nil || ee.ProcessState.ExitCode() != -1 {
		t.Fatalf("writer subprocess did not die of SIGKILL: %v\n%s", err, stderr.String())
	}
}

// KilledSlotToken and ReRunToken are the tokens of a slot run killed after
// its first batch and of its re-run.
const (
	KilledSlotToken int64 = 70
	ReRunToken      int64 = 80
)

// WriteKilledSlotRun is what the killed slot run does in its subprocess:
// it writes the first half of KillRows(n), committed, then calls stop (which
// makes the sink wait inside its next transaction, StopInTransaction) and
// writes the second half, where it is killed.
func WriteKilledSlotRun(sink etl.Sink, stop func(), n int) error {
	ctx := SlotLeased(SlotStart, KilledSlotToken)
	rows := KillRows(n)
	if err := sink.Write(ctx, rows[:n/2]); err != nil {
		return err
	}
	stop()
	return sink.Write(ctx, rows[n/2:])
}

// CheckKilledSlotRun checks the database after WriteKilledSlotRun's
// subprocess was killed, then re-runs the slot with sink (an upsert into
// table by id): the killed run's first batch stands, uncompleted, in the
// ledger; the re-run with a higher token takes the slot over and completes
// it, leaving the table as if the slot ran once; the killed run's token is
// stale afterwards and a third run is refused as slot done.
func CheckKilledSlotRun(t *testing.T, db DB, sink etl.Sink, table string, n int) {
	t.Helper()
	if got := db.Ints(t, "SELECT count(*) FROM "+table); got[0] != int64(n/2) {
		t.Fatalf("%d rows after the kill, want the first batch's %d", got[0], n/2)
	}
	if got := ledger(t, db, table, SlotStart); !slices.Equal(got, []int64{KilledSlotToken * 10}) {
		t.Fatalf("ledger after the kill: %v, want token %d not completed", got, KilledSlotToken)
	}
	rerun := SlotLeased(SlotStart, ReRunToken)
	if err := sink.Write(rerun, KillRows(n)); err != nil {
		t.Fatalf("the re-run: %v", err)
	}
	if err := complete(t, sink, rerun); err != nil {
		t.Fatal(err)
	}
	got := db.Ints(t, "SELECT count(*) FROM "+table+" UNION ALL SELECT count(*) FROM "+table+" WHERE v = 'v' || id")
	if got[0] != int64(n) || got[1] != int64(n) {
		t.Fatalf("after the re-run: %d rows, %d intact; want %d", got[0], got[1], n)
	}
	if got := ledger(t, db, table, SlotStart); !slices.Equal(got, []int64{ReRunToken*10 + 1}) {
		t.Fatalf("ledger after the re-run: %v, want token %d completed", got, ReRunToken)
	}
	if err := sink.Write(SlotLeased(SlotStart, KilledSlotToken), KillRows(1)); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("the killed run's token after the re-run: err = %v, want ErrStaleWriter", err)
	}
	wantSlotDone(t, sink.Write(SlotLeased(SlotStart, ReRunToken+1), KillRows(1)), table, SlotStart, ReRunToken+1, ReRunToken)
}
