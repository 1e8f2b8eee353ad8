package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redact"
	"github.com/pelletier/go-toml/v2"
)

// Option configures Load and Parse.
type Option func(*options)

type options struct {
	registry  *etl.Registry
	lookupEnv func(string) (string, bool)
}

// WithRegistry sets the components that `type = "..."` names; the default
// is DefaultRegistry(). Pass a registry with components of your own to
// build an agora-like binary that knows them.
func WithRegistry(r *etl.Registry) Option {
	return func(o *options) { o.registry = r }
}

// WithLookupEnv sets how ${VAR} references are resolved (default
// os.LookupEnv), so tests and embedding programs need not touch the
// process environment.
func WithLookupEnv(lookup func(string) (string, bool)) Option {
	return func(o *options) { o.lookupEnv = lookup }
}

// Load reads and checks the agora/v1 file at path. A file with problems
// gives a Diagnostics error listing all of them; a file that cannot be read
// gives a Diagnostics error with the file's name and the reason.
func Load(path string, opts ...Option) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = "cannot read the file: " + pe.Err.Error()
		}
		return nil, Diagnostics{{File: path, Message: msg}}
	}
	return Parse(path, data, opts...)
}

// Parse checks data as the agora/v1 file named name (used in
// diagnostics only).
func Parse(name string, data []byte, opts ...Option) (*File, error) {
	o := options{lookupEnv: os.LookupEnv}
	for _, opt := range opts {
		opt(&o)
	}
	if o.registry == nil {
		o.registry = DefaultRegistry()
	}
	// The position index and go-toml's decoding both read the whole file
	// and nothing else, so on a machine with two cores they run side by
	// side; the split decoding finds its table headers with a walk of its
	// own (a few percent of the index's time).
	indexed := make(chan *index, 1)
	go func() { indexed <- newIndex(data) }()
	doc, err := decodeDocument(data)
	ix := <-indexed
	if err != nil {
		// The document's meaning is unknown past a syntax error or a key
		// defined twice, so this is the only diagnostic.
		return nil, Diagnostics{syntaxDiagnostic(name, err)}
	}
	d := &decoder{file: name, dir: baseDir(name), ix: ix, lookupEnv: o.lookupEnv, registry: o.registry, broken: map[string]bool{}}
	d.interpolate(doc, nil)
	d.known = redact.NewKnown(secretsIn(doc, ""))
	f := d.document(doc)
	if len(d.diags) > 0 {
		// Messages about ${VAR} references were written before the
		// secrets were known.
		for i := range d.diags {
			d.diags[i].Message = d.known.Text(d.diags[i].Message)
		}
		return nil, d.diags.sorted()
	}
	f.Path = name
	f.lookupEnv = o.lookupEnv
	f.known = d.known
	for _, p := range f.Pipelines {
		p.known = d.known
	}
	return f, nil
}

// baseDir is the absolute directory of the file named name: relative
// paths in the file (file sources and sinks, move_to) start there, not at
// the working directory of the process, so a worker started from anywhere
// reads and writes the same files.
func baseDir(name string) string {
	dir := filepath.Dir(name)
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// syntaxDiagnostic positions go-toml's own error: a syntax error, or a
// table or key defined twice.
func syntaxDiagnostic(name string, err error) Diagnostic {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		// go-toml names the last part of the key only ("table orders
		// already exists"); the whole key says which.
		if k := de.Key(); len(k) > 1 {
			msg = path(k).String() + ": " + msg
		}
		return Diagnostic{File: name, Line: line, Col: col, Message: redact.Text(msg)}
	}
	return Diagnostic{File: name, Line: 1, Col: 1, Message: redact.Text(err.Error())}
}

// tomlUnmarshal is go-toml's decoder into a generic document.
func tomlUnmarshal(data []byte, doc *map[string]any) error { return toml.Unmarshal(data, doc) }
