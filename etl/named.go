package etl

import (
	"context"
	"fmt"
	"io"
)

// A component (source or sink) may have two optional methods the pipeline
// uses to describe it in dead letters, errors and trace spans:
//
//	Name() string // this instance, such as "file(out.jsonl)"
//	Type() string // its registered type, such as "file"
//
// A sink without Name is called "sinks[i]" after its position; Named gives
// any sink a name of your choosing.

// Named returns sink under name: dead letters of its rejections carry name in
// their DeadLetterSink field. Open, Flush, Discard, Complete, Close and
// ReplacesSlots are passed through.
func Named(name string, sink Sink) Sink { return &namedSink{name: name, sink: sink} }

type namedSink struct {
	name string
	sink Sink
}

// Name returns the name given to Named.
func (n *namedSink) Name() string { return n.name }

// Type returns the wrapped sink's type.
func (n *namedSink) Type() string { return componentType(n.sink) }

// Write writes to the wrapped sink.
func (n *namedSink) Write(ctx context.Context, records []Record) error {
	return n.sink.Write(ctx, records)
}

// Flush flushes the wrapped sink when it buffers.
func (n *namedSink) Flush(ctx context.Context) error {
	if f, ok := n.sink.(Flusher); ok {
		return f.Flush(ctx)
	}
	return nil
}

// Complete completes the wrapped sink's run when it is a Completer.
func (n *namedSink) Complete(ctx context.Context) error {
	if c, ok := n.sink.(Completer); ok {
		return c.Complete(ctx)
	}
	return nil
}

// ReplacesSlots reports whether the wrapped sink replaces slots
// (SlotReplacer).
func (n *namedSink) ReplacesSlots() bool { return ReplacesSlots(n.sink) }

// Open opens the wrapped sink when it is an Opener.
func (n *namedSink) Open(ctx context.Context) error {
	if o, ok := n.sink.(Opener); ok {
		return o.Open(ctx)
	}
	return nil
}

// Discard discards the wrapped sink's buffer when it is a Discarder.
func (n *namedSink) Discard() {
	if d, ok := n.sink.(Discarder); ok {
		d.Discard()
	}
}

// Close closes the wrapped sink when it is an io.Closer.
func (n *namedSink) Close() error {
	if c, ok := n.sink.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// componentName is c's Name, or fallback.
func componentName(c any, fallback string) string {
	if n, ok := c.(interface{ Name() string }); ok {
		if name := n.Name(); name != "" {
			return name
		}
	}
	return fallback
}

// componentType is c's Type, or its Go type.
func componentType(c any) string {
	if t, ok := c.(interface{ Type() string }); ok {
		if typ := t.Type(); typ != "" {
			return typ
		}
	}
	return fmt.Sprintf("%T", c)
}
