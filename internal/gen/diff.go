package gen

import (
	"fmt"
	"strings"
)

// UnifiedDiff returns a unified diff (3 lines of context) that turns old
// into new, with the given file labels, or "" when they are equal.
func UnifiedDiff(oldLabel, newLabel string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := splitLines(string(old)), splitLines(string(new))
	ops := diffLines(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldLabel, newLabel)
	const context = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == opEqual {
			i++
			continue
		}
		// A hunk runs from this change to the last change followed by fewer
		// than 2*context equal lines.
		start := i
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != opEqual {
				end = j + 1
				continue
			}
			run := j
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-j > 2*context {
				break
			}
			j = run - 1
		}
		lo := max(start-context, 0)
		hi := min(end+context, len(ops))
		aStart, bStart := ops[lo].aIndex, ops[lo].bIndex
		var aLen, bLen int
		var body strings.Builder
		for _, op := range ops[lo:hi] {
			switch op.kind {
			case opEqual:
				aLen++
				bLen++
				body.WriteString(" " + op.line)
			case opDelete:
				aLen++
				body.WriteString("-" + op.line)
			case opInsert:
				bLen++
				body.WriteString("+" + op.line)
			}
			if !strings.HasSuffix(op.line, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		out.WriteString(body.String())
		i = hi
	}
	return out.String()
}

// hunkRange formats a hunk's line range; start is 0-based.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	default:
		return fmt.Sprintf("%d,%d", start+1, n)
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type opKind uint8

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// diffOp is one line of an edit script, with the indexes it has in a and b
// before it is applied.
type diffOp struct {
	kind           opKind
	line           string
	aIndex, bIndex int
}

// maxMyers bounds the lines handed to Myers' algorithm, whose trace grows
// with the square of the edit distance; beyond it the changed middle is
// shown as one replacement, which is still a correct diff.
const maxMyers = 4000

// diffLines computes an edit script from a to b: the common prefix and
// suffix are kept, and the middle is diffed with Myers' algorithm.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{kind: opEqual, line: a[i], aIndex: i, bIndex: i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var mid []diffOp
	if len(ma)+len(mb) > maxMyers {
		for i, line := range ma {
			mid = append(mid, diffOp{kind: opDelete, line: line, aIndex: i, bIndex: 0})
		}
		for j, line := range mb {
			mid = append(mid, diffOp{kind: opInsert, line: line, aIndex: len(ma), bIndex: j})
		}
	} else {
		mid = myers(ma, mb)
	}
	for _, op := range mid {
		op.aIndex += pre
		op.bIndex += pre
		ops = append(ops, op)
	}
	for i := 0; i < suf; i++ {
		ai, bi := len(a)-suf+i, len(b)-suf+i
		ops = append(ops, diffOp{kind: opEqual, line: a[ai], aIndex: ai, bIndex: bi})
	}
	return ops
}

// myers computes a shortest edit script from a to b: O((N+M)·D) time.
func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	maxD := n + m
	offset := maxD + 1
	v := make([]int, 2*maxD+3)
	// trace[d] holds v[-d..d] as it was before step d.
	var trace [][]int
	found := false
	for d := 0; d <= maxD && !found; d++ {
		trace = append(trace, append([]int(nil), v[offset-d:offset+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[offset+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	var ops []diffOp
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		vd := trace[d]
		at := func(k int) int { return vd[k+d] }
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := 0
		if d > 0 {
			prevX = at(prevK)
		}
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			ops = append(ops, diffOp{kind: opEqual, line: a[x], aIndex: x, bIndex: y})
		}
		if d > 0 {
			if x == prevX {
				y--
				ops = append(ops, diffOp{kind: opInsert, line: b[y], aIndex: x, bIndex: y})
			} else {
				x--
				ops = append(ops, diffOp{kind: opDelete, line: a[x], aIndex: x, bIndex: y})
			}
		}
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}
