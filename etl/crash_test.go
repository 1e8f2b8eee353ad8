package etl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redistest"
)

// crashChildEnv, when set, makes the test binary a worker running one
// redis_stream → file pipeline; the other crash* variables configure it.
const (
	crashChildEnv    = "AGORA_ETL_CRASH_CHILD"
	crashURLEnv      = "AGORA_ETL_CRASH_URL"
	crashOutEnv      = "AGORA_ETL_CRASH_OUT"
	crashConsumerEnv = "AGORA_ETL_CRASH_CONSUMER"
	crashStallEnv    = "AGORA_ETL_CRASH_STALL" // batch number to stall in, -1 for none
)

const (
	crashStream = "events"
	crashGroup  = "etl"
	crashBatch  = 50
)

// crashChild runs the pipeline until the stream is drained. In the batch
// numbered by crashStallEnv it stalls after the file sink has written and
// fsynced the batch but before the batch is acknowledged, and says so on
// stdout, so the parent can kill it mid-batch.
func crashChild() int {
	stall, _ := strconv.Atoi(os.Getenv(crashStallEnv))
	src, err := etl.NewRedisStreamSource(etl.RedisStreamSourceConfig{
		URL: os.Getenv(crashURLEnv), Stream: crashStream, Group: crashGroup,
		Consumer:  os.Getenv(crashConsumerEnv),
		Block:     etl.Duration(100 * time.Millisecond),
		ClaimIdle: etl.Duration(time.Millisecond),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	file, err := etl.NewFileSink(etl.FileSinkConfig{Path: os.Getenv(crashOutEnv)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	staller := &stallSink{file: file, at: stall}
	if err := etl.New(src, []etl.Sink{file, staller}, etl.WithBatchSize(crashBatch)).Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("done")
	return 0
}

type stallSink struct {
	file  *etl.FileSink
	at, n int
}

func (s *stallSink) Write(ctx context.Context, records []etl.Record) error {
	if s.n == s.at {
		if err := s.file.Flush(ctx); err != nil {
			return err
		}
		fmt.Println("stalled")
		select {} // until SIGKILL
	}
	s.n++
	return nil
}

// runCrashChild starts a worker; with stall ≥ 0 it waits for the stall and
// SIGKILLs it, otherwise it waits for it to finish.
func runCrashChild(t *testing.T, url, out, consumer string, stall int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", crashURLEnv+"="+url, crashOutEnv+"="+out,
		crashConsumerEnv+"="+consumer, crashStallEnv+"="+strconv.Itoa(stall))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	want := "done"
	if stall >= 0 {
		want = "stalled"
	}
	select {
	case line := <-lines:
		if line != want {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("worker %s said %q, want %q; stderr: %s", consumer, line, want, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("worker %s said nothing; stderr: %s", consumer, stderr.String())
	}
	if stall >= 0 {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	err = cmd.Wait()
	if stall < 0 && err != nil {
		t.Fatalf("worker %s: %v; stderr: %s", consumer, err, stderr.String())
	}
}

// countIDs returns how often each id appears in the JSON lines file.
func countIDs(t *testing.T, path string) map[int]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[int]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct{ ID int }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		seen[r.ID]++
	}
	return seen
}

func TestCrashMidBatchLosesNothing(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	const total = 1000
	addEntries(t, c, crashStream, 0, total)
	out := filepath.Join(t.TempDir(), "out.jsonl")

	// Worker 1 is killed in its 4th batch: 4 batches are in the file, the
	// 4th never acknowledged (nor the 5th, when it was already read ahead).
	runCrashChild(t, srv.URL(), out, "w1", 3)
	if n := len(countIDs(t, out)); n != 4*crashBatch {
		t.Fatalf("after the first kill the file has %d ids, want %d", n, 4*crashBatch)
	}
	if n := pendingCount(t, c, crashStream, crashGroup); n != crashBatch && n != 2*crashBatch {
		t.Fatalf("pending after the first kill = %d, want the unacknowledged batch of %d (and the one read ahead)", n, crashBatch)
	}
	// Restarted under the same name it re-reads its pending batch first,
	// and is killed again two batches later.
	runCrashChild(t, srv.URL(), out, "w1", 2)
	if n := pendingCount(t, c, crashStream, crashGroup); n != crashBatch && n != 2*crashBatch {
		t.Fatalf("pending after the second kill = %d, want %d or %d", n, crashBatch, 2*crashBatch)
	}
	// Another replica claims what w1 left pending and drains the stream.
	runCrashChild(t, srv.URL(), out, "w2", -1)

	seen := countIDs(t, out)
	dups := 0
	for id := 0; id < total; id++ {
		switch n := seen[id]; {
		case n == 0:
			t.Fatalf("entry %d was lost", id)
		case n > 1:
			dups++
		}
	}
	if len(seen) != total {
		t.Fatalf("%d distinct ids in the file, want %d", len(seen), total)
	}
	// The two stalled batches were written before their kill and again
	// after it: at least once, not exactly once.
	if dups != 2*crashBatch {
		t.Fatalf("%d ids written twice, want the %d of the two killed batches", dups, 2*crashBatch)
	}
	if n := pendingCount(t, c, crashStream, crashGroup); n != 0 {
		t.Fatalf("%d entries left unacknowledged", n)
	}
	groups, err := c.XInfoGroups(ctx, crashStream).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || groups[0].Lag != 0 || groups[0].EntriesRead != total {
		t.Fatalf("group %+v: want every entry read", groups)
	}
}
