package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/errsplit"
	"github.com/agora-etl/agora/internal/redact"
	"github.com/agora-etl/agora/internal/texttable"
	"github.com/agora-etl/agora/internal/typo"
	"github.com/pelletier/go-toml/v2"
)

// Component is a checked component table: a source, a sink or a DLQ.
type Component struct {
	// Type is the table's type, a name in the registry.
	Type string
	// Kind is etl.KindSource or etl.KindSink.
	Kind etl.Kind
	// Config is the decoded and validated configuration, a pointer from
	// Spec.NewConfig().
	Config any
	// Spec is the registered component.
	Spec *etl.ComponentSpec
	// Name is a sink's name key ("" when not set): used in dead letters,
	// errors and trace spans in place of "sinks[i]".
	Name string

	// at is where the table is in the document, and pos where its type
	// value is in the file.
	at  path
	pos position

	// urls are the table's path and its string values that look like
	// URLs, redacted, as "key=value", for Summary.
	urls []string
}

// component checks a component table: its type, then its keys and values
// against the component's configuration struct, then the component's own
// Validate.
func (d *decoder) component(m map[string]any, at path, kind etl.Kind) Component {
	c := Component{Kind: kind, at: at}
	known := d.registry.Names(kind)
	typ, ok := d.str(m, at, "type")
	if _, has := m["type"]; !has {
		d.atKey(at, "%s: type is missing: add type = \"...\" (known %s types: %s)", at, kind, strings.Join(known, ", "))
		return c
	}
	if !ok {
		return c
	}
	c.Type = typ
	c.pos = d.ix.valuePos(at.child("type"))
	spec, err := d.registry.Lookup(kind, typ)
	if err != nil {
		other := etl.KindSink
		if kind == etl.KindSink {
			other = etl.KindSource
		}
		if _, otherErr := d.registry.Lookup(other, typ); otherErr == nil {
			d.atValue(at.child("type"), "%s: %s is a %s, not a %s; known %s types: %s", at.child("type"), d.quoted(at.child("type"), typ), other, kind, kind, strings.Join(known, ", "))
		} else {
			suggestion := ""
			if s := typo.Closest(typ, known); s != "" {
				suggestion = fmt.Sprintf(" (did you mean %q?)", s)
			}
			d.atValue(at.child("type"), "%s: unknown %s type %s%s; known %s types: %s", at.child("type"), kind, d.quoted(at.child("type"), typ), suggestion, kind, strings.Join(known, ", "))
		}
		return c
	}
	c.Spec = spec
	// Only paths and URLs (redacted) are shown: any other string could be
	// a secret under a name Redact cannot know.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if s, isStr := m[k].(string); isStr && k != "type" && (k == "path" || strings.Contains(s, "://")) {
			c.urls = append(c.urls, k+"="+d.redacted(s))
		}
	}

	body := deepCopy(m).(map[string]any)
	delete(body, "type")
	extra := []string{"type"}
	// A sink's name key belongs to the pipeline, unless the component
	// has a key of that name itself.
	if kind == etl.KindSink && !slices.ContainsFunc(structFields(spec.ConfigType()), func(f field) bool { return f.name == "name" }) {
		extra = append(extra, "name")
		if name, ok := d.str(m, at, "name"); ok {
			if name == "" {
				d.atValue(at.child("name"), "%s: must not be empty (leave it out to name the sink after its position)", at.child("name"))
			}
			c.Name = name
		}
		delete(body, "name")
	}
	fields := d.checkStruct(body, at, spec.ConfigType(), extra)
	cfg := spec.NewConfig()
	if !d.decodeInto(body, at, cfg) {
		return c
	}
	if r, ok := cfg.(etl.PathResolver); ok {
		r.ResolvePaths(d.dir)
	}
	if fields && d.validate(spec, cfg, at) {
		c.Config = cfg
	}
	return c
}

// decodeInto decodes a checked table into cfg with go-toml's strict
// decoder, which converts the values the way it would from the file, and
// places whatever it still objects to at the key it names.
func (d *decoder) decodeInto(body map[string]any, at path, cfg any) bool {
	if len(body) == 0 {
		return true // an empty document leaves cfg as it is
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(body); err != nil {
		d.atKey(at, "%s: %v", at, err)
		return false
	}
	dec := toml.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	err := dec.Decode(cfg)
	if err == nil {
		return true
	}
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case errors.As(err, &strict):
		for _, e := range strict.Errors {
			p := append(at[:len(at):len(at)], e.Key()...)
			d.atKey(p, "%s: unknown key", p)
		}
	case errors.As(err, &de):
		p := append(at[:len(at):len(at)], de.Key()...)
		d.atValue(p, "%s: %s", p, strings.TrimPrefix(de.Error(), "toml: "))
	default:
		d.atKey(at, "%s: %v", at, err)
	}
	return false
}

// validate runs the component's own checks; a *etl.FieldError is placed at
// its key, anything else at the table. It reports whether cfg is valid.
func (d *decoder) validate(spec *etl.ComponentSpec, cfg any, at path) bool {
	err := spec.Validate(cfg)
	if err == nil {
		return true
	}
	for _, e := range errsplit.Split(err) {
		var fe *etl.FieldError
		if errors.As(e, &fe) {
			p := append(at[:len(at):len(at)], strings.Split(fe.Key, ".")...)
			d.atKey(p, "%s: %v", p, fe.Err)
			continue
		}
		d.atKey(at, "%s: %v", at, e)
	}
	return false
}

// deepCopy copies the tables and arrays of a decoded value, so a check can
// drop keys without changing the document.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, el := range v {
			m[k] = deepCopy(el)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, el := range v {
			s[i] = deepCopy(el)
		}
		return s
	default:
		return v
	}
}

// describe is the component for Summary: its name and type, what its
// configuration describes of itself (etl.Describer: a SQL sink's table,
// mode and key), its path and redacted URLs.
func (c Component) describe(known *redact.Known) string {
	if c.Name != "" {
		c.Type = c.Name + ": " + c.Type
	}
	var details []string
	if d, ok := c.Config.(etl.Describer); ok {
		for _, kv := range d.Describe() {
			details = append(details, texttable.Printable(known.Text(kv)))
		}
	}
	details = append(details, c.urls...)
	if len(details) == 0 {
		return c.Type
	}
	return fmt.Sprintf("%s (%s)", c.Type, strings.Join(details, ", "))
}
