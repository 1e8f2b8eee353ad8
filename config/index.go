package config

import (
	"bytes"
	"sort"
	"strconv"

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
	// elems counts the [[headers]] of an array of tables so far.
	elems int
}

// index records, for every key of a TOML document, where it was written.
// go-toml's decoder gives values but no positions; its unstable parser
// gives positions of the same document, which are gathered here by path.
//
// Spans are kept in a slice in the order their keys first appear, found
// by path id (path.id) through one map. While walking, the id of the
// current path is built in place in a reused buffer, so a key already seen
// (a table named again by a header below it) costs a map look-up and no
// allocation: with thousands of pipelines the walk is linear and cheap.
type index struct {
	data       []byte
	lineStarts []int
	ids        map[string]int // path id → position in spans (the file order)
	spans      []span

	// cur is the id of the path being walked and depth its length.
	cur   []byte
	depth int
	// look is a scratch buffer for ids of paths looked up.
	look []byte
}

// newIndex walks data. Past a syntax error it records nothing more.
func newIndex(data []byte) *index {
	lines := bytes.Count(data, []byte{'\n'})
	ix := &index{data: data, lineStarts: make([]int, 1, lines+2)}
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		ix.lineStarts = append(ix.lineStarts, i)
	}
	// About one span per = or [ (a key, a header, an array element).
	n := bytes.Count(data, []byte{'='}) + bytes.Count(data, []byte{'['}) + 1
	ix.ids = make(map[string]int, n)
	ix.spans = make([]span, 0, n)
	var p unstable.Parser
	p.Reset(data)
	var table []byte // the id of the table the key/values below belong to
	tableDepth := 0
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
			ix.cur, ix.depth = append(ix.cur[:0], table...), tableDepth
			ix.keyValue(e)
		case unstable.Table, unstable.ArrayTable:
			ix.header(e)
			table, tableDepth = append(table[:0], ix.cur...), ix.depth
		}
	}
	return ix
}

// push descends the walked path into key; pop(mark) goes back up.
func (ix *index) push(key []byte) (mark int) {
	mark = len(ix.cur)
	if ix.depth > 0 {
		ix.cur = append(ix.cur, idSep)
	}
	ix.cur = append(ix.cur, key...)
	ix.depth++
	return mark
}

// pushIndex descends the walked path into array element i.
func (ix *index) pushIndex(i int) (mark int) {
	mark = len(ix.cur)
	if ix.depth > 0 {
		ix.cur = append(ix.cur, idSep)
	}
	ix.cur = append(ix.cur, indexMark...)
	ix.cur = strconv.AppendInt(ix.cur, int64(i), 10)
	ix.depth++
	return mark
}

func (ix *index) pop(mark int) {
	ix.cur = ix.cur[:mark]
	ix.depth--
}

// pos converts a byte offset to a position.
func (ix *index) pos(off int) position {
	line := sort.SearchInts(ix.lineStarts, off+1) - 1
	return position{line: line + 1, col: off - ix.lineStarts[line] + 1}
}

// entry returns the span of the walked path, adding it when new.
func (ix *index) entry() int {
	if i, ok := ix.ids[string(ix.cur)]; ok {
		return i
	}
	i := len(ix.spans)
	ix.ids[string(ix.cur)] = i
	ix.spans = append(ix.spans, span{})
	return i
}

// setKey records where span i's key is written, unless it was seen
// before: a table mentioned in several headers is placed where it first
// appears.
func (ix *index) setKey(i int, n *unstable.Node) {
	if s := &ix.spans[i]; s.key.line == 0 {
		s.key = ix.pos(int(n.Raw.Offset))
	}
}

// header handles [a.b] and [[a.b]] and leaves the walked path at the table
// they open. A prefix naming an array of tables means its last element, as
// in TOML.
func (ix *index) header(e *unstable.Node) {
	ix.cur, ix.depth = ix.cur[:0], 0
	it := e.Key()
	for it.Next() {
		n := it.Node()
		ix.push(n.Data)
		i := ix.entry()
		ix.setKey(i, n)
		last := it.IsLast()
		switch {
		case last && e.Kind == unstable.ArrayTable:
			k := ix.spans[i].elems
			ix.spans[i].elems++
			ix.pushIndex(k)
			j := ix.entry()
			ix.setKey(j, n)
			ix.setValue(j, n, -1)
		case last:
			ix.setValue(i, n, -1)
		case ix.spans[i].elems > 0:
			ix.pushIndex(ix.spans[i].elems - 1)
		}
	}
}

// keyValue handles key = value (dotted keys included) inside the table at
// the walked path, and leaves the walked path where it was.
func (ix *index) keyValue(e *unstable.Node) {
	mark, depth := len(ix.cur), ix.depth
	keyEnd := 0
	it := e.Key()
	for it.Next() {
		n := it.Node()
		ix.push(n.Data)
		ix.setKey(ix.entry(), n)
		keyEnd = int(n.Raw.Offset + n.Raw.Length)
	}
	ix.value(e.Value(), keyEnd)
	ix.cur, ix.depth = ix.cur[:mark], depth
}

// value records the value at the walked path and, for inline tables and
// arrays, what they hold. after is an offset before the value, for nodes
// without their own range.
func (ix *index) value(v *unstable.Node, after int) {
	at := ix.entry()
	ix.setValue(at, v, after)
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			ix.keyValue(it.Node())
		}
	case unstable.Array:
		it := v.Children()
		i := 0
		for it.Next() {
			mark := ix.pushIndex(i)
			ix.value(it.Node(), ix.spans[at].off+1)
			// An element is its own key: diagnostics about it point at it.
			el := &ix.spans[ix.entry()]
			if el.value.line != 0 {
				el.key = el.value
			} else {
				el.key = ix.spans[at].value
			}
			ix.pop(mark)
			i++
		}
	}
}

// setValue records where the value of span i starts. Arrays have no range
// of their own in the parser's tree: their [ is found after the key's =.
func (ix *index) setValue(i int, n *unstable.Node, after int) {
	s := &ix.spans[i]
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

// lookup returns the span of p.
func (ix *index) lookup(p path) (*span, bool) {
	ix.look = p.appendID(ix.look[:0])
	if i, ok := ix.ids[string(ix.look)]; ok {
		return &ix.spans[i], true
	}
	return nil, false
}

// keyPos returns where p's key is written, or its nearest ancestor's.
func (ix *index) keyPos(p path) position {
	for ; len(p) > 0; p = p[:len(p)-1] {
		if s, ok := ix.lookup(p); ok && s.key.line != 0 {
			return s.key
		}
	}
	return position{1, 1}
}

// valuePos returns where p's value is written, or else its key.
func (ix *index) valuePos(p path) position {
	if s, ok := ix.lookup(p); ok && s.value.line != 0 {
		return s.value
	}
	return ix.keyPos(p)
}

// order returns the rank of p in the order keys appear in the document.
func (ix *index) order(p path) int {
	ix.look = p.appendID(ix.look[:0])
	if i, ok := ix.ids[string(ix.look)]; ok {
		return i
	}
	return len(ix.spans)
}

// within returns the position of the first occurrence of needle in the
// bytes of p's value, or p's value position when it does not occur there.
func (ix *index) within(p path, needle string) position {
	s, ok := ix.lookup(p)
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
	s, ok := ix.lookup(p)
	return ok && s.end > s.off && bytes.Contains(ix.data[s.off:s.end], []byte(needle))
}
