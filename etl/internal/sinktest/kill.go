package sinktest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
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
