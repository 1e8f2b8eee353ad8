package etl

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/agora-etl/agora/internal/isnil"
)

// Kind says whether a component reads or writes records.
type Kind string

// The component kinds.
const (
	// KindSource components read records.
	KindSource Kind = "source"
	// KindSink components write records; any sink can also be a dead-letter
	// queue.
	KindSink Kind = "sink"
)

// ErrUnknownType is wrapped by Registry.Lookup when no component has the
// type name asked for.
var ErrUnknownType = errors.New("etl: unknown component type")

// Registry maps component type names ("file", "redis_stream", ...) to their
// constructors and configuration schemas. A config-only worker looks every
// `type = "..."` up here; a program that registers its own components and
// hands the registry to the agora command gets its own agora binary.
//
// A Registry is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	specs map[Kind]map[string]*ComponentSpec
}

// NewRegistry returns an empty registry. Builtins returns one holding the
// built-in components.
func NewRegistry() *Registry {
	return &Registry{specs: map[Kind]map[string]*ComponentSpec{KindSource: {}, KindSink: {}}}
}

// ComponentSpec describes one registered component: its type name, kind and
// configuration schema, and builds it.
type ComponentSpec struct {
	// Type is the name used in `type = "..."`.
	Type string
	// Kind is KindSource or KindSink.
	Kind Kind
	// Summary is a one-line description shown by `agora check` and help.
	Summary string

	config reflect.Type // the struct type C the constructor takes
	build  func(ctx context.Context, cfg any) (any, error)
}

// ConfigType returns the configuration struct type. Its exported fields,
// named by their `toml` tags, are the keys a component table may have besides
// `type`; a key not among them is an error.
func (s *ComponentSpec) ConfigType() reflect.Type { return s.config }

// NewConfig returns a pointer to a new zero configuration, to decode a
// component table into.
func (s *ComponentSpec) NewConfig() any { return reflect.New(s.config).Interface() }

// Validate checks a decoded configuration (a pointer from NewConfig): it
// calls the configuration's Validate method when it has one. Problems
// about one key are *FieldError values, possibly joined with errors.Join.
func (s *ComponentSpec) Validate(cfg any) error {
	if err := s.checkConfig(cfg); err != nil {
		return err
	}
	if v, ok := cfg.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

// BuildSource constructs the source from a decoded configuration. The
// config-only worker calls it once per run, with the run's context.
func (s *ComponentSpec) BuildSource(ctx context.Context, cfg any) (Source, error) {
	if s.Kind != KindSource {
		return nil, fmt.Errorf("etl: %q is a %s, not a source", s.Type, s.Kind)
	}
	c, err := s.buildChecked(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return c.(Source), nil
}

// BuildSink constructs the sink from a decoded configuration.
func (s *ComponentSpec) BuildSink(ctx context.Context, cfg any) (Sink, error) {
	if s.Kind != KindSink {
		return nil, fmt.Errorf("etl: %q is a %s, not a sink", s.Type, s.Kind)
	}
	c, err := s.buildChecked(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return c.(Sink), nil
}

func (s *ComponentSpec) buildChecked(ctx context.Context, cfg any) (any, error) {
	if err := s.checkConfig(cfg); err != nil {
		return nil, err
	}
	c, err := s.build(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", s.Kind, s.Type, err)
	}
	if isnil.Value(c) {
		return nil, fmt.Errorf("etl: %s %q: constructor returned nil", s.Kind, s.Type)
	}
	return c, nil
}

func (s *ComponentSpec) checkConfig(cfg any) error {
	if cfg == nil || reflect.TypeOf(cfg) != reflect.PointerTo(s.config) {
		return fmt.Errorf("etl: %s %q wants a *%s configuration, got %T", s.Kind, s.Type, s.config, cfg)
	}
	return nil
}

// FieldError is a problem with one key of a component's configuration, so
// the config loader can point at that key's line and column.
type FieldError struct {
	// Key is the key as written in the table, such as "format".
	Key string
	// Err says what is wrong.
	Err error
}

// Error names the key.
func (e *FieldError) Error() string { return e.Key + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// FieldErrorf returns a *FieldError for key with a formatted message.
func FieldErrorf(key, format string, args ...any) error {
	return &FieldError{Key: key, Err: fmt.Errorf(format, args...)}
}

// RegisterSource registers a source constructor under typeName. C is the
// configuration struct: its exported fields with `toml` tags are the keys
// the source's table accepts. build runs once per run. Registering a name
// twice replaces the earlier component, so a program can override a
// built-in one.
func RegisterSource[C any](r *Registry, typeName, summary string, build func(ctx context.Context, cfg C) (Source, error)) {
	register(r, KindSource, typeName, summary, func(ctx context.Context, cfg any) (any, error) {
		return build(ctx, *cfg.(*C))
	}, reflect.TypeFor[C]())
}

// RegisterSink registers a sink constructor under typeName; see
// RegisterSource.
func RegisterSink[C any](r *Registry, typeName, summary string, build func(ctx context.Context, cfg C) (Sink, error)) {
	register(r, KindSink, typeName, summary, func(ctx context.Context, cfg any) (any, error) {
		return build(ctx, *cfg.(*C))
	}, reflect.TypeFor[C]())
}

func register(r *Registry, kind Kind, typeName, summary string, build func(context.Context, any) (any, error), config reflect.Type) {
	if config.Kind() != reflect.Struct {
		panic(fmt.Sprintf("etl: %s %q: configuration type %s is not a struct", kind, typeName, config))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.specs[kind][typeName] = &ComponentSpec{Type: typeName, Kind: kind, Summary: summary, config: config, build: build}
}

// Lookup returns the component of kind registered as typeName. The error
// wraps ErrUnknownType and lists the known names.
func (r *Registry) Lookup(kind Kind, typeName string) (*ComponentSpec, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if s, ok := r.specs[kind][typeName]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w %q for a %s (known: %v)", ErrUnknownType, typeName, kind, r.namesLocked(kind))
}

// Names returns the type names registered for kind, sorted.
func (r *Registry) Names(kind Kind) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked(kind)
}

func (r *Registry) namesLocked(kind Kind) []string {
	names := make([]string, 0, len(r.specs[kind]))
	for n := range r.specs[kind] {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Clone returns a copy of r that can be extended without changing r.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c := NewRegistry()
	for kind, m := range r.specs {
		for n, s := range m {
			c.specs[kind][n] = s
		}
	}
	return c
}

// Specs returns every component of kind, sorted by type name.
func (r *Registry) Specs(kind Kind) []*ComponentSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*ComponentSpec, 0, len(r.specs[kind]))
	for _, s := range r.specs[kind] {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *ComponentSpec) int {
		if a.Type < b.Type {
			return -1
		}
		if a.Type > b.Type {
			return 1
		}
		return 0
	})
	return out
}
