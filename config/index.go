package config

import (
	"bytes"
	"sort"

	"github.com/pelletier/go-toml/v2/unstable"
)

// position is a line and column (in bytes) of the document, both from 1.
type position struct{ line, col int }

// span is where one value of the document is written: its key and the
// value itself. For an array element the key is the element.
type span struct {
	key, value position
	// off and end delimit the value's bytes (for strings, with quotes),
	// so a diagnostic can point inside a string.
	off, end int
}

// index records, for every key of a TOML document, where it was written.
// go-toml's decoder gives values but no positions; its unstable parser
// gives positions of the same document, which are gathered here by path.
type index struct {
	data       []byte
	lineStarts []int
	spans      map[string]*span
	arrays     map[string]int // element counts of arrays of tables
	first      map[string]int // order in which keys appear, for file order
}

// newIndex walks data, which must already have parsed without error.
func newIndex(data []byte) *index {
	ix := &index{data: data, lineStarts: []int{0}, spans: map[string]*span{}, arrays: map[string]int{}, first: map[string]int{}}
	for i, c := range data {
		if c == '\n' {
			ix.lineStarts = append(ix.lineStarts, i+1)
		}
	}
	var p unstable.Parser
	p.Reset(data)
	var table path
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
			ix.keyValue(table, e)
		case unstable.Table, unstable.ArrayTable:
			table = ix.header(e)
		}
	}
	return ix
}

// pos converts a byte offset to a position.
func (ix *index) pos(off int) position {
	line := sort.Search(len(ix.lineStarts), func(i int) bool { return ix.lineStarts[i] > off }) - 1
	return position{line: line + 1, col: off - ix.lineStarts[line] + 1}
}

func (ix *index) entry(p path) *span {
	id := p.id()
	s, ok := ix.spans[id]
	if !ok {
		s = &span{}
		ix.spans[id] = s
		ix.first[id] = len(ix.first)
	}
	return s
}

// setKey records where p's key is written, unless it was seen before: a
// table mentioned in several headers is placed where it first appears.
func (ix *index) setKey(p path, n *unstable.Node) {
	s := ix.entry(p)
	if s.key.line == 0 {
		s.key = ix.pos(int(n.Raw.Offset))
	}
}

// header handles [a.b] and [[a.b]] and returns the table path they open.
// A prefix naming an array of tables means its last element, as in TOML.
func (ix *index) header(e *unstable.Node) path {
	var cur path
	it := e.Key()
	for it.Next() {
		n := it.Node()
		cur = cur.child(string(n.Data))
		ix.setKey(cur, n)
		last := it.IsLast()
		switch {
		case last && e.Kind == unstable.ArrayTable:
			i := ix.arrays[cur.id()]
			ix.arrays[cur.id()] = i + 1
			cur = cur.index(i)
			ix.setKey(cur, n)
			ix.setValue(cur, n, -1)
		case last:
			ix.setValue(cur, n, -1)
		case ix.arrays[cur.id()] > 0:
			cur = cur.index(ix.arrays[cur.id()] - 1)
		}
	}
	return cur
}

// keyValue handles key = value (dotted keys included) inside table.
func (ix *index) keyValue(table path, e *unstable.Node) {
	cur := table
	keyEnd := 0
	it := e.Key()
	for it.Next() {
		n := it.Node()
		cur = cur.child(string(n.Data))
		ix.setKey(cur, n)
		keyEnd = int(n.Raw.Offset + n.Raw.Length)
	}
	ix.value(cur, e.Value(), keyEnd)
}

// value records a value and, for inline tables and arrays, what they hold.
// after is an offset before the value, for nodes without their own range.
func (ix *index) value(at path, v *unstable.Node, after int) {
	ix.setValue(at, v, after)
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			ix.keyValue(at, it.Node())
		}
	case unstable.Array:
		it := v.Children()
		i := 0
		for it.Next() {
			el := at.index(i)
			parent := ix.spans[at.id()]
			ix.value(el, it.Node(), parent.off+1)
			// An element is its own key: diagnostics about it point at it.
			if s := ix.spans[el.id()]; s.value.line != 0 {
				s.key = s.value
			} else {
				s.key = parent.value
			}
			i++
		}
	}
}

// setValue records where the value at p starts. Arrays have no range of
// their own in the parser's tree: their [ is found after the key's =.
func (ix *index) setValue(p path, n *unstable.Node, after int) {
	s := ix.entry(p)
	off, end := int(n.Raw.Offset), int(n.Raw.Offset+n.Raw.Length)
	if n.Raw.Length == 0 {
		if after < 0 || after > len(ix.data) {
			return
		}
		off = after
		if i := bytes.IndexByte(ix.data[after:], '['); i >= 0 {
			off = after + i
		}
		end = off
	}
	s.value = ix.pos(off)
	s.off, s.end = off, end
}

// keyPos returns where p's key is written, or its nearest ancestor's.
func (ix *index) keyPos(p path) position {
	for ; len(p) > 0; p = p[:len(p)-1] {
		if s, ok := ix.spans[p.id()]; ok && s.key.line != 0 {
			return s.key
		}
	}
	return position{1, 1}
}

// valuePos returns where p's value is written, or else its key.
func (ix *index) valuePos(p path) position {
	if s, ok := ix.spans[p.id()]; ok && s.value.line != 0 {
		return s.value
	}
	return ix.keyPos(p)
}

// order returns the rank of p in the order keys appear in the document.
func (ix *index) order(p path) int {
	if i, ok := ix.first[p.id()]; ok {
		return i
	}
	return len(ix.first)
}

// within returns the position of the first occurrence of needle in the
// bytes of p's value, or p's value position when it does not occur there.
func (ix *index) within(p path, needle string) position {
	s, ok := ix.spans[p.id()]
	if !ok || s.end <= s.off {
		return ix.valuePos(p)
	}
	if i := bytes.Index(ix.data[s.off:s.end], []byte(needle)); i >= 0 {
		return ix.pos(s.off + i)
	}
	return s.value
}

// raw reports whether the bytes of p's value contain needle.
func (ix *index) raw(p path, needle string) bool {
	s, ok := ix.spans[p.id()]
	return ok && s.end > s.off && bytes.Contains(ix.data[s.off:s.end], []byte(needle))
}
