package etl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/agora-etl/agora/etl/fencing"
)

// FileMark is what the file source remembers of one file: the size and
// modification time it had when it was read, and how far its records were
// acknowledged.
type FileMark struct {
	// Size is the file's size when it was last opened.
	Size int64 `json:"size"`
	// ModTime is its modification time then, in Unix nanoseconds.
	ModTime int64 `json:"mtime"`
	// Offset is the byte offset after the last acknowledged record.
	Offset int64 `json:"offset"`
	// Line is the number of lines before Offset, so positions in errors
	// stay those of the file.
	Line int `json:"line"`
}

// ReadState keeps the file source's marks, one set per key (the pipeline
// and the resolved path pattern), shared by every replica that reads the
// files. Saves are fenced: a save with a fencing token lower than one saved
// before under the key is refused with an error wrapping
// fencing.ErrStaleWriter, so a run that lost its lease cannot move the
// marks back.
type ReadState interface {
	// Load returns the marks saved under key, by file path.
	Load(ctx context.Context, key string) (map[string]FileMark, error)
	// Save sets the marks of set and removes those of del, at once.
	Save(ctx context.Context, key string, token int64, set map[string]FileMark, del []string) error
}

type readStateKey struct{}

// ContextWithReadState returns a copy of ctx carrying state: a file source
// built with that context and no state of its own keeps its marks there.
// The config-only worker passes the coordinator's Redis this way.
func ContextWithReadState(ctx context.Context, state ReadState) context.Context {
	return context.WithValue(ctx, readStateKey{}, state)
}

// ReadStateFromContext returns the state ContextWithReadState put in ctx.
func ReadStateFromContext(ctx context.Context) (ReadState, bool) {
	s, ok := ctx.Value(readStateKey{}).(ReadState)
	return s, ok && s != nil
}

// LocalReadState keeps marks in JSON files in a directory, one file per
// key, each replaced atomically (written aside, fsynced, renamed). It is
// the state of a single process; replicas on several hosts share marks
// through Redis (NewRedisReadState).
type LocalReadState struct {
	dir string
	mu  sync.Mutex
}

// NewLocalReadState returns a state kept under dir, created when needed.
func NewLocalReadState(dir string) *LocalReadState { return &LocalReadState{dir: dir} }

type localState struct {
	Key   string              `json:"key"`
	Token int64               `json:"token"`
	Files map[string]FileMark `json:"files"`
}

func (s *LocalReadState) file(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:12])+".json")
}

func (s *LocalReadState) load(key string) (localState, error) {
	st := localState{Key: key, Files: map[string]FileMark{}}
	data, err := os.ReadFile(s.file(key))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("etl: read state: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("etl: read state %s: %w", s.file(key), err)
	}
	if st.Files == nil {
		st.Files = map[string]FileMark{}
	}
	return st, nil
}

// Load returns the marks saved under key.
func (s *LocalReadState) Load(_ context.Context, key string) (map[string]FileMark, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.load(key)
	return st.Files, err
}

// Save sets and removes marks under key.
func (s *LocalReadState) Save(ctx context.Context, key string, token int64, set map[string]FileMark, del []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.load(key)
	if err != nil {
		return err
	}
	if err := fencing.Check(ctx, nil, "read state "+key, token, st.Token); err != nil {
		return err
	}
	st.Token = token
	for p, m := range set {
		st.Files[p] = m
	}
	for _, p := range del {
		delete(st.Files, p)
	}
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("etl: read state: %w", err)
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("etl: read state: %w", err)
	}
	return writeAtomically(s.file(key), data)
}

// writeAtomically replaces path with data so that a crash leaves either
// the old or the new content.
func writeAtomically(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("etl: read state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("etl: read state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("etl: read state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("etl: read state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("etl: read state: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("etl: read state: %w", err)
	}
	return nil
}
