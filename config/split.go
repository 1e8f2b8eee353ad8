package config

import (
	"bytes"

	"github.com/pelletier/go-toml/v2/unstable"
)

// splitThreshold is the number of pipelines from which decodeDocument
// decodes each pipeline's tables on their own.
const splitThreshold = 64

// decodeDocument decodes data into a generic document, as toml.Unmarshal
// does, in time linear in the number of pipelines.
//
// go-toml checks that no table is defined twice by scanning, for every
// header, the tables already seen under the same parent: with thousands of
// [pipelines.<id>.…] headers that is quadratic (10,000 pipelines took
// seconds, nearly all of it in that scan). The tables of one pipeline are
// independent of every other pipeline's, so a large file is decoded as one
// small document per pipeline (its headers in file order) plus one for the
// rest, and the results are joined. Whenever that is not plainly the same
// document — a syntax error anywhere, a pipeline also defined outside its
// own headers (a dotted key, an inline table, [[pipelines]]), a duplicate —
// the whole file is decoded at once instead, so every error and its position
// is go-toml's own, exactly as before.
func decodeDocument(data []byte) (map[string]any, error) {
	if doc, ok := decodeSplit(data); ok {
		return doc, nil
	}
	var doc map[string]any
	err := tomlUnmarshal(data, &doc)
	return doc, err
}

// chunk is the part of a document from a table header's line to the next
// header's.
type chunk struct {
	start  int
	group  string // a pipeline id, or "" for the rest of the document
	isRest bool
}

// headerChunk returns the chunk table header e starts; ok is false for a
// header without a key.
func headerChunk(data []byte, e *unstable.Node) (chunk, bool) {
	it := e.Key()
	if !it.Next() {
		return chunk{}, false
	}
	first := it.Node()
	start := bytes.LastIndexByte(data[:first.Raw.Offset], '\n') + 1
	c := chunk{start: start, isRest: true}
	if string(first.Data) == "pipelines" && it.Next() {
		c.group, c.isRest = string(it.Node().Data), false
	}
	return c, true
}

// findChunks lists data's chunks; ok is false after a syntax error.
func findChunks(data []byte) ([]chunk, bool) {
	var chunks []chunk
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != unstable.Table && e.Kind != unstable.ArrayTable {
			continue
		}
		c, ok := headerChunk(data, e)
		if !ok {
			return nil, false
		}
		chunks = append(chunks, c)
	}
	return chunks, p.Error() == nil
}

// pieces is the text of one group of chunks: byte ranges of the document,
// joined when adjacent, so a pipeline written in one place is decoded from
// the document's own bytes without a copy.
type pieces [][2]int

func (ps *pieces) add(start, stop int) {
	if n := len(*ps); n > 0 && (*ps)[n-1][1] == start {
		(*ps)[n-1][1] = stop
		return
	}
	*ps = append(*ps, [2]int{start, stop})
}

func (ps pieces) text(data []byte) []byte {
	if len(ps) == 1 {
		return data[ps[0][0]:ps[0][1]]
	}
	var b bytes.Buffer
	for _, r := range ps {
		b.Write(data[r[0]:r[1]])
		// A chunk ends where the next header's line starts; a newline
		// keeps the next chunk of the group on a line of its own.
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// decodeSplit is the per-pipeline decoding of decodeDocument; ok is false
// when the whole file must be decoded instead.
func decodeSplit(data []byte) (map[string]any, bool) {
	chunks, ok := findChunks(data)
	if !ok || len(chunks) == 0 {
		return nil, false
	}
	var rest pieces
	groups := map[string]int{} // pipeline id → its pieces in texts
	var order []string
	var texts []pieces
	end := len(data)
	rest.add(0, chunks[0].start)
	for i, c := range chunks {
		stop := end
		if i+1 < len(chunks) {
			stop = chunks[i+1].start
		}
		if c.isRest {
			rest.add(c.start, stop)
			continue
		}
		g, ok := groups[c.group]
		if !ok {
			g = len(texts)
			groups[c.group] = g
			order = append(order, c.group)
			texts = append(texts, nil)
		}
		texts[g].add(c.start, stop)
	}
	if len(order) < splitThreshold {
		return nil, false
	}
	var doc map[string]any
	if tomlUnmarshal(rest.text(data), &doc) != nil {
		return nil, false
	}
	if doc == nil {
		doc = map[string]any{}
	}
	pipelines, _ := doc["pipelines"].(map[string]any)
	if pipelines == nil {
		if _, has := doc["pipelines"]; has {
			return nil, false // pipelines = … or [[pipelines]]
		}
		pipelines = map[string]any{}
		doc["pipelines"] = pipelines
	}
	for i, id := range order {
		var g map[string]any
		if tomlUnmarshal(texts[i].text(data), &g) != nil {
			return nil, false
		}
		gp, _ := g["pipelines"].(map[string]any)
		if len(g) != 1 || len(gp) != 1 {
			return nil, false
		}
		if _, dup := pipelines[id]; dup {
			return nil, false // also defined by the rest of the document
		}
		pipelines[id] = gp[id]
	}
	return doc, true
}
