package transform

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
)

// nested is n levels of list.macro(v, ...) over a literal list of size
// elements, around body.
func nested(n, size int, macro, body string) string {
	var l []string
	for i := range size {
		l = append(l, fmt.Sprint(i))
	}
	list := "[" + strings.Join(l, ", ") + "]"
	for i := range n {
		body = fmt.Sprintf("%s.%s(v%d, %s)", list, macro, i, body)
	}
	return body
}

// TestExpensiveExpressionsDoNotCompile: the repros, a 6-deep
// all() over 20 elements as a filter and a 7-deep map() over 10 as a map,
// are over the default max_cost before any record is read.
func TestExpensiveExpressionsDoNotCompile(t *testing.T) {
	_, err := Filter(nested(6, 20, "all", "true"))
	var ce *CompileError
	var cost *CostError
	if !errors.As(err, &ce) || !errors.As(err, &cost) || !errors.Is(err, ErrMaxCost) || cost.Limit != DefaultMaxCost || cost.Max <= DefaultMaxCost {
		t.Fatalf("6-deep all: %v", err)
	}
	if !strings.Contains(ce.Message, "a cost of up to") || ce.Line != 1 || ce.Col != 1 {
		t.Fatalf("message %q at %d:%d", ce.Message, ce.Line, ce.Col)
	}
	_, err = Map(map[string]string{"a": "1", "big": nested(7, 10, "map", "1")})
	var fe *FieldCompileError
	if !errors.As(err, &fe) || fe.Field != "big" || !errors.As(err, &cost) || cost.Min <= DefaultMaxCost {
		t.Fatalf("7-deep map: %v", err)
	}
	if !strings.Contains(err.Error(), "a cost of at least") {
		t.Fatalf("message %v", err)
	}
	// Raised, the limit lets them through; lowered, it stops cheap ones.
	if _, err := Filter(nested(6, 20, "all", "true"), WithMaxCost(math.MaxInt64)); err != nil {
		t.Fatal(err)
	}
	if _, err := Filter("[1, 2, 3].exists(x, x == 2)", WithMaxCost(5)); !errors.Is(err, ErrMaxCost) {
		t.Fatalf("lowered: %v", err)
	}
	if _, err := Filter("true", WithMaxCost(0)); err == nil || !strings.Contains(err.Error(), "max_cost is 0") {
		t.Fatalf("zero: %v", err)
	}
}

// TestMapFieldsAreBoundedTogether: two fields each within the limit but
// over it together are a *CostError naming both, not placed on either.
func TestMapFieldsAreBoundedTogether(t *testing.T) {
	half := nested(2, 10, "map", "1") // about 1,550 each
	_, err := Map(map[string]string{"a": half, "b": half}, WithMaxCost(2000))
	var cost *CostError
	var fe *FieldCompileError
	if !errors.As(err, &cost) || errors.As(err, &fe) || fmt.Sprint(cost.Fields) != "[a b]" {
		t.Fatalf("err %v", err)
	}
	if _, err := Map(map[string]string{"a": half}, WithMaxCost(2000)); err != nil {
		t.Fatal(err)
	}
}

// TestEvaluationOverMaxCostFailsTheRecord: a cost that depends on the
// record (a comprehension over a record's list) is tracked while the
// expression runs; over the limit the record fails with ErrMaxCost, and
// records below it pass.
func TestEvaluationOverMaxCostFailsTheRecord(t *testing.T) {
	expr := "record.items.all(x, record.items.all(y, x + y >= 0))"
	f, err := Filter(expr, WithMaxCost(10_000))
	if err != nil {
		t.Fatal(err)
	}
	if f.(*filter).prg.limit != 10_000 {
		t.Fatalf("limit %d: the cost is not tracked", f.(*filter).prg.limit)
	}
	small, big := items(10), items(1000)
	if _, keep, err := apply(t, f, etl.Record{"items": small}); err != nil || !keep {
		t.Fatalf("small: keep %v, err %v", keep, err)
	}
	start := time.Now()
	_, _, err = apply(t, f, etl.Record{"items": big})
	if !errors.Is(err, ErrMaxCost) || !strings.Contains(err.Error(), "10000") || !strings.Contains(err.Error(), "filter") {
		t.Fatalf("big: %v", err)
	}
	// A million pairs unbounded; stopped at 10,000 units it is quick.
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stopped after %s", d)
	}
	m, err := Map(map[string]string{"n": "size(record.items.map(x, record.items.map(y, x * y)))", "k": "1"}, WithMaxCost(10_000))
	if err != nil {
		t.Fatal(err)
	}
	in := etl.Record{"items": big}
	if _, _, err := apply(t, m, in); !errors.Is(err, ErrMaxCost) || !strings.Contains(err.Error(), "map([k n])") {
		t.Fatalf("map: %v", err)
	}
	if len(in) != 1 {
		t.Fatalf("the failed record changed: %v", in)
	}
}

// TestCheapExpressionsAreNotTracked: an expression whose cost is bounded
// within the limit whatever the record, or without a comprehension and
// within it for values of a million elements, runs without cost tracking;
// one whose cost multiplies sizes is tracked; one without a comprehension
// runs without a context-bound frame.
func TestCheapExpressionsAreNotTracked(t *testing.T) {
	for expr, want := range map[string]program{
		"record.amount > 0":                        {},
		"string(record.at).substring(0, 10) != ''": {},
		"record.s.replace('', record.s) != ''":     {limit: DefaultMaxCost},
		"record.tags.exists(t, t == 'x')":          {limit: DefaultMaxCost, interruptible: true},
		"[1, 2].all(x, x > 0)":                     {interruptible: true},
	} {
		f, err := Filter(expr)
		if err != nil {
			t.Fatal(err)
		}
		p := f.(*filter).prg
		if p.limit != want.limit || p.interruptible != want.interruptible {
			t.Errorf("%s: limit %d, interruptible %v; want %d, %v", expr, p.limit, p.interruptible, want.limit, want.interruptible)
		}
	}
}

// TestEvaluationStopsWhenTheContextEnds: an evaluation that would run for
// minutes stops soon after its context is cancelled, with the cause.
func TestEvaluationStopsWhenTheContextEnds(t *testing.T) {
	f, err := Filter(nested(6, 20, "all", "true"), WithMaxCost(math.MaxInt64))
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("the run timed out")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := f.Apply(ctx, etl.Record{})
		done <- err
	}()
	time.AfterFunc(20*time.Millisecond, func() { cancel(cause) })
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Fatalf("err %v, want the cause", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the evaluation did not stop")
	}
	// Already ended: the map of a comprehension stops too.
	m, err := Map(map[string]string{"x": nested(7, 10, "map", "1")}, WithMaxCost(math.MaxInt64))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Apply(ctx, etl.Record{}); !errors.Is(err, cause) {
		t.Fatalf("map: %v", err)
	}
}

func items(n int) []any {
	l := make([]any, n)
	for i := range l {
		l[i] = int64(i)
	}
	return l
}

// TestEvaluationThatMultipliesSizesIsStopped: without a comprehension,
// an expression whose cost is the product of two sizes is tracked and
// stopped at its limit.
func TestEvaluationThatMultipliesSizesIsStopped(t *testing.T) {
	m, err := Map(map[string]string{"x": "record.s.replace('', record.s)"}, WithMaxCost(10_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := apply(t, m, etl.Record{"s": "ab"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := apply(t, m, etl.Record{"s": strings.Repeat("ab", 2000)}); !errors.Is(err, ErrMaxCost) {
		t.Fatalf("err %v, want ErrMaxCost", err)
	}
}
