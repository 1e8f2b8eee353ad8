package etl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// oldFile writes content and dates it a minute back, so it counts as
// settled.
func oldFile(t *testing.T, path, content string) {
	t.Helper()
	writeFile(t, path, content)
	settle(t, path)
}

func settle(t *testing.T, path string) {
	t.Helper()
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// runOnce reads cfg's files to the end through a source using state,
// acknowledging every batch, and returns the records' "n" fields.
func runOnce(t *testing.T, ctx context.Context, cfg FileSourceConfig, state ReadState) []string {
	t.Helper()
	src, err := NewFileSource(cfg, WithReadState(state))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	for {
		b, err := src.Read(ctx, 2)
		for _, r := range b.Records {
			got = append(got, r["n"].(string))
		}
		if len(b.Records) > 0 && b.Ack != nil {
			if err := b.Ack(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestFileSourceReadsEachFileOnceAndOnlyNewLines(t *testing.T) {
	for _, format := range []string{FormatJSONL, FormatCSV} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			line := func(n string) string {
				if format == FormatCSV {
					return n + "\n"
				}
				return `{"n":"` + n + `"}` + "\n"
			}
			head := ""
			if format == FormatCSV {
				head = "n\n"
			}
			a, b := filepath.Join(dir, "a."+format), filepath.Join(dir, "b."+format)
			oldFile(t, a, head+line("1")+line("2")+line("3"))
			oldFile(t, b, head+line("4"))
			state := NewLocalReadState(filepath.Join(dir, "state"))
			cfg := FileSourceConfig{Path: filepath.Join(dir, "*."+format)}
			ctx := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "p", FencingToken: 7})
			if got := strings.Join(runOnce(t, ctx, cfg, state), ","); got != "1,2,3,4" {
				t.Fatalf("first run: %s", got)
			}
			if got := runOnce(t, ctx, cfg, state); len(got) != 0 {
				t.Fatalf("second run read %v again", got)
			}
			appendFile(t, a, line("5")+line("6"))
			settle(t, a)
			c := filepath.Join(dir, "c."+format)
			oldFile(t, c, head+line("7"))
			if got := strings.Join(runOnce(t, ctx, cfg, state), ","); got != "5,6,7" {
				t.Fatalf("after a grew and c came: %s", got)
			}
			// Another pipeline reading the same files has marks of its own.
			other := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "q", FencingToken: 1})
			if got := len(runOnce(t, other, cfg, state)); got != 7 {
				t.Fatalf("pipeline q read %d records, want all 7", got)
			}
			// A file replaced by a smaller one is read as new.
			oldFile(t, a, head+line("8"))
			if got := strings.Join(runOnce(t, ctx, cfg, state), ","); got != "8" {
				t.Fatalf("after a was replaced: %s", got)
			}
		})
	}
}

func TestFileSourceRereadsWhatWasNeverAcknowledged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.jsonl")
	oldFile(t, path, `{"n":"1"}`+"\n"+`{"n":"2"}`+"\n"+`{"n":"3"}`+"\n")
	state := NewLocalReadState(filepath.Join(dir, "state"))
	cfg := FileSourceConfig{Path: path}
	ctx := context.Background()

	// A run takes the first batch, acknowledges it, takes the second and
	// dies before its acknowledgement.
	src, err := NewFileSource(cfg, WithReadState(state))
	if err != nil {
		t.Fatal(err)
	}
	b, err := src.Read(ctx, 2)
	if err != nil || len(b.Records) != 2 {
		t.Fatalf("first batch: %v, %v", b.Records, err)
	}
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err = src.Read(ctx, 2); err != nil || len(b.Records) != 1 {
		t.Fatalf("second batch: %v, %v", b.Records, err)
	}
	src.Close()

	if got := strings.Join(runOnce(t, ctx, cfg, state), ","); got != "3" {
		t.Fatalf("after the crash: %q, want the unacknowledged record 3 again", got)
	}
	if got := runOnce(t, ctx, cfg, state); len(got) != 0 {
		t.Fatalf("then %v", got)
	}
}

func TestFileSourceAfterReadMovesOrDeletesOnlyAcknowledgedFiles(t *testing.T) {
	for _, after := range []string{AfterReadMove, AfterReadDelete} {
		t.Run(after, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			os.Mkdir(in, 0o755)
			a, b := filepath.Join(in, "a.jsonl"), filepath.Join(in, "b.jsonl")
			oldFile(t, a, `{"n":"1"}`+"\n"+`{"n":"2"}`+"\n")
			oldFile(t, b, `{"n":"3"}`+"\n"+`{"n":"4"}`+"\n")
			cfg := FileSourceConfig{Path: filepath.Join(in, "*.jsonl"), AfterRead: after}
			if after == AfterReadMove {
				cfg.MoveTo = filepath.Join(dir, "done")
			}
			state := NewLocalReadState(filepath.Join(dir, "state"))
			ctx := context.Background()
			src, err := NewFileSource(cfg, WithReadState(state))
			if err != nil {
				t.Fatal(err)
			}
			batch, err := src.Read(ctx, 2)
			if err != nil || len(batch.Records) != 2 {
				t.Fatal(batch.Records, err)
			}
			if _, err := os.Stat(a); err != nil {
				t.Fatalf("a is gone before its batch was acknowledged: %v", err)
			}
			if err := batch.Ack(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(a); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a after its acknowledgement: %v", err)
			}
			// b's batch is never acknowledged: b stays and is read again.
			if batch, err = src.Read(ctx, 2); len(batch.Records) != 2 {
				t.Fatal(batch.Records, err)
			}
			src.Close()
			if _, err := os.Stat(b); err != nil {
				t.Fatalf("b: %v", err)
			}
			if got := strings.Join(runOnce(t, ctx, cfg, state), ","); got != "3,4" {
				t.Fatalf("next run: %s", got)
			}
			left, _ := filepath.Glob(filepath.Join(in, "*"))
			if len(left) != 0 {
				t.Fatalf("left in the input directory: %v", left)
			}
			if after == AfterReadMove {
				moved, _ := filepath.Glob(filepath.Join(dir, "done", "*"))
				if len(moved) != 2 {
					t.Fatalf("moved: %v", moved)
				}
			}
			if marks, _ := state.Load(ctx, src.key); len(marks) != 0 {
				t.Fatalf("marks of finished files kept: %v", marks)
			}
			// An empty directory is not an error.
			if got := runOnce(t, ctx, cfg, state); len(got) != 0 {
				t.Fatal(got)
			}
		})
	}
}

func TestFileSourceLeavesAnUnfinishedLastLineUntilTheFileSettles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.jsonl")
	writeFile(t, path, `{"n":"1"}`+"\n"+`{"n":"2`) // a writer is still at it
	state := NewLocalReadState(filepath.Join(dir, "state"))
	cfg := FileSourceConfig{Path: path}
	ctx := context.Background()
	if got := strings.Join(runOnce(t, ctx, cfg, state), ","); got != "1" {
		t.Fatalf("fresh file: %q", got)
	}
	appendFile(t, path, `"}`)
	settle(t, path) // no line break, but nobody wrote for a while
	if got := strings.Join(runOnce(t, ctx, cfg, state), ","); got != "2" {
		t.Fatalf("settled file: %q", got)
	}
}

func TestFileSourceWarnsOncePerChangeWhenNothingMatches(t *testing.T) {
	var logs bytes.Buffer
	orig := fileSourceLogger
	fileSourceLogger = func() *slog.Logger { return slog.New(slog.NewTextHandler(&logs, nil)) }
	defer func() { fileSourceLogger = orig }()
	dir := t.TempDir()
	cfg := FileSourceConfig{Path: filepath.Join(dir, "*.jsonl")}
	state := NewLocalReadState(filepath.Join(dir, "state"))
	ctx := context.Background()
	count := func(s string) int { return strings.Count(logs.String(), s) }
	for range 3 {
		runOnce(t, ctx, cfg, state)
	}
	if count("level=WARN") != 1 || count("matches no file") != 1 {
		t.Fatalf("three empty runs logged:\n%s", logs.String())
	}
	oldFile(t, filepath.Join(dir, "a.jsonl"), `{"n":"1"}`+"\n")
	runOnce(t, ctx, cfg, state)
	runOnce(t, ctx, cfg, state)
	if count("matches files again") != 1 {
		t.Fatalf("after a file came:\n%s", logs.String())
	}
	os.Remove(filepath.Join(dir, "a.jsonl"))
	runOnce(t, ctx, cfg, state)
	if count("level=WARN") != 2 {
		t.Fatalf("after it went:\n%s", logs.String())
	}
}

func TestFileSourceConfigChecksAfterRead(t *testing.T) {
	for _, tc := range []struct {
		cfg  FileSourceConfig
		want string
	}{
		{FileSourceConfig{Path: "a.jsonl", AfterRead: "mvoe"}, `after_read: "mvoe" is not an after_read`},
		{FileSourceConfig{Path: "a.jsonl", AfterRead: "move"}, "move_to: is missing"},
		{FileSourceConfig{Path: "a.jsonl", MoveTo: "done"}, "move_to: is only used with after_read"},
		{FileSourceConfig{Path: "a.jsonl", AfterRead: "delete", State: "none"}, `after_read: "delete" needs a read state`},
		{FileSourceConfig{Path: "a.jsonl", State: "redis://:secret@/x:y"}, "state: "},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := NewFileSource(FileSourceConfig{Path: "a.jsonl", AfterRead: "delete"}); err == nil {
		t.Error("after_read = delete without any read state was accepted")
	}
}

// TestFileSourceReadsOnceAcrossReplicasThroughRedis: two replicas, each
// with its own connection to one real redis-server, share the marks.
func TestFileSourceReadsOnceAcrossReplicasThroughRedis(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "in.jsonl")
	oldFile(t, path, `{"n":"1"}`+"\n"+`{"n":"2"}`+"\n"+`{"n":"3"}`+"\n")
	replica := func() ReadState {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		t.Cleanup(func() { c.Close() })
		return NewRedisReadState(c, "")
	}
	a, b := replica(), replica()
	cfg := FileSourceConfig{Path: path}
	lease := func(token int64) context.Context {
		return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "p", FencingToken: token})
	}
	if got := strings.Join(runOnce(t, lease(10), cfg, a), ","); got != "1,2,3" {
		t.Fatalf("replica a: %s", got)
	}
	if got := runOnce(t, lease(11), cfg, b); len(got) != 0 {
		t.Fatalf("replica b read %v again", got)
	}
	appendFile(t, path, `{"n":"4"}`+"\n")
	settle(t, path)
	if got := strings.Join(runOnce(t, lease(12), cfg, b), ","); got != "4" {
		t.Fatalf("replica b after the file grew: %s", got)
	}
	// Replica a, still holding token 10 (its lease lost), cannot move the
	// marks back.
	err := a.Save(lease(10), "p "+path, 10, map[string]FileMark{path: {}}, nil)
	if !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("stale save: %v", err)
	}
	marks, err := b.Load(context.Background(), "p "+path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if m := marks[path]; m.Offset != st.Size() || m.Line != 4 {
		js, _ := json.Marshal(marks)
		t.Fatalf("marks after the stale save: %s", js)
	}
}
