package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// celPipeline is a once pipeline from in.jsonl through transforms to
// out.jsonl, with dead.jsonl as its dead-letter queue.
func celPipeline(transforms string) string {
	return `format = "agora/v1"

[pipelines.p]
source = { type = "file", path = "in.jsonl" }
sinks = [{ type = "file", path = "out.jsonl" }]
dlq = { type = "file", path = "dead.jsonl" }
schedule = { mode = "once" }
` + transforms
}

// runOnce runs the once pipelines of the config at path with agora run or
// agora worker (cmd): a pool of once pipelines stops by itself when they
// are done. It returns the exit code and stderr.
func runOnce(t *testing.T, dir, cmd, path string) (int, string) {
	t.Helper()
	env := []string{"AGORA_DISTRIBUTED_REDIS_URL="}
	if cmd == "run" {
		code, _, stderr := runAgora(t, dir, env, "run", "--config", path)
		return code, stderr
	}
	p := startAgora(t, dir, env, "worker", "--config", path, "-health-port", "0")
	code := p.wait(t, 60*time.Second)
	return code, p.stderr.String()
}

// nestedCEL is n levels of list.macro(v, ...) over [0, ..., size-1].
func nestedCEL(n, size int, macro, body string) string {
	var l []string
	for i := range size {
		l = append(l, fmt.Sprint(i))
	}
	for i := range n {
		body = fmt.Sprintf("[%s].%s(v%d, %s)", strings.Join(l, ","), macro, i, body)
	}
	return body
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestRunKeepsNullsThroughCEL: issue 27's null repro through agora run
// and agora worker --config: the nulls an expression reads and builds are null in the
// record written, and a list of maps inside a map is extended.
func TestRunKeepsNullsThroughCEL(t *testing.T) {
	for _, cmd := range []string{"run", "worker"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			writeConfig(t, dir, "in.jsonl", `{"id":1,"n":null,"doc":{"tags":[{"k":"a","v":null}]}}`+"\n")
			path := writeConfig(t, dir, "p.toml", celPipeline(`
[[pipelines.p.transforms]]
type = "map"
fields = { pair = "[record.n, record.id]", orig = "{'orig': record.n}", deep = "[[null]]", tags = "record.doc.tags + ['new']" }
`))
			if code, stderr := runOnce(t, dir, cmd, path); code != 0 {
				t.Fatalf("agora %s: exit %d\n%s", cmd, code, stderr)
			}
			got := readLines(t, filepath.Join(dir, "out.jsonl"))
			want := []map[string]any{{
				"id": 1.0, "n": nil, "doc": map[string]any{"tags": []any{map[string]any{"k": "a", "v": nil}}},
				"pair": []any{nil, 1.0}, "orig": map[string]any{"orig": nil}, "deep": []any{[]any{nil}},
				"tags": []any{map[string]any{"k": "a", "v": nil}, "new"},
			}}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("written %v\nwant    %v", got, want)
			}
			if dead := readLines(t, filepath.Join(dir, "dead.jsonl")); len(dead) != 0 {
				t.Fatalf("dead letters %v", dead)
			}
		})
	}
}

// TestCheckRefusesExpensiveCEL: issue 27's cost repros, a 6-deep all()
// filter and a 7-deep map() (180 characters), are refused by agora
// check, agora run and agora worker at the expression, before anything is read or written.
func TestCheckRefusesExpensiveCEL(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, "in.jsonl", `{"id":1}`+"\n"+`{"id":2}`+"\n")
	path := writeConfig(t, dir, "p.toml", celPipeline(`
[[pipelines.p.transforms]]
type = "filter"
expr = "`+nestedCEL(6, 20, "all", "true")+`"

[[pipelines.p.transforms]]
type = "map"
fields = { x = "`+nestedCEL(7, 10, "map", "1")+`" }
`))
	for _, cmd := range []string{"check", "run", "worker"} {
		code, stdout, stderr := runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, cmd, "--config", path)
		out := stdout + stderr
		if code == 0 || !strings.Contains(out, "p.toml:11:9: pipelines.p.transforms[0].expr: the expression has a cost of up to") ||
			!strings.Contains(out, "p.toml:15:17: pipelines.p.transforms[1].fields.x: the expression has a cost of at least") {
			t.Fatalf("agora %s: exit %d\n%s", cmd, code, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("out.jsonl exists (stat: %v)", err)
	}
}

// TestRunDeadLettersAnEvaluationOverMaxCost: an expression whose cost
// depends on the record is stopped at max_cost on the record that costs
// too much, which is dead-lettered with an error saying so; the others
// are written. Through agora run and agora worker.
func TestRunDeadLettersAnEvaluationOverMaxCost(t *testing.T) {
	for _, cmd := range []string{"run", "worker"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			big := make([]string, 1000)
			for i := range big {
				big[i] = fmt.Sprint(i)
			}
			writeConfig(t, dir, "in.jsonl", `{"id":1,"l":[1,2,3]}`+"\n"+`{"id":2,"l":[`+strings.Join(big, ",")+`]}`+"\n"+`{"id":3,"l":[]}`+"\n")
			path := writeConfig(t, dir, "p.toml", celPipeline(`
		[[pipelines.p.transforms]]
		type = "filter"
		max_cost = 50000
		expr = "record.l.all(x, record.l.all(y, x + y >= 0))"
		`))
			code, stderr := runOnce(t, dir, cmd, path)
			if code != 0 {
				t.Fatalf("agora %s: exit %d\n%s", cmd, code, stderr)
			}
			var ids []any
			for _, r := range readLines(t, filepath.Join(dir, "out.jsonl")) {
				ids = append(ids, r["id"])
			}
			if !reflect.DeepEqual(ids, []any{1.0, 3.0}) {
				t.Fatalf("written ids %v", ids)
			}
			dead := readLines(t, filepath.Join(dir, "dead.jsonl"))
			if len(dead) != 1 || !strings.Contains(fmt.Sprint(dead[0]), "max_cost (50000)") || !strings.Contains(fmt.Sprint(dead[0]), "id:2") {
				t.Fatalf("dead letters %v", dead)
			}
		})
	}
}

// TestRunStopsCELAtItsTimeout: issue 27's timeout repro: the 6-deep
// all() filter, allowed by a raised max_cost, on 2 records with timeout
// = "1s" (it ran 53 s and both records were written after the timeout):
// the run stops at its timeout, fails, and writes nothing. Through agora
// run and agora worker (which stops after the one failed run).
func TestRunStopsCELAtItsTimeout(t *testing.T) {
	for _, cmd := range []string{"run", "worker"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			writeConfig(t, dir, "in.jsonl", `{"id":1}`+"\n"+`{"id":2}`+"\n")
			path := writeConfig(t, dir, "p.toml", celPipeline(`timeout = "1s"
max_consecutive_errors = 1

		[[pipelines.p.transforms]]
		type = "filter"
		max_cost = 9000000000000000000
		expr = "`+nestedCEL(6, 20, "all", "true")+`"
		`))
			start := time.Now()
			code, stderr := runOnce(t, dir, cmd, path)
			took := time.Since(start)
			if code == 0 || !strings.Contains(stderr, "timed out") {
				t.Fatalf("agora %s: exit %d, want a failure naming the timeout\n%s", cmd, code, stderr)
			}
			// Unbounded, the filter runs for about a minute per record; the
			// bound leaves room for building and starting the binary under load.
			if took > 40*time.Second {
				t.Fatalf("the run took %s", took)
			}
			if out := readLines(t, filepath.Join(dir, "out.jsonl")); len(out) != 0 {
				t.Fatalf("written after the timeout: %v", out)
			}
			if dead := readLines(t, filepath.Join(dir, "dead.jsonl")); len(dead) != 0 {
				t.Fatalf("dead-lettered after the timeout: %v", dead)
			}
		})
	}
}

// TestHugeNumbersAreNeverRoundedThroughCEL: issue 27's precision repro,
// pair = [record.n, record.id] on n = 99999999999999999999, used to write
// 1e20. Through agora run and agora worker: the record whose n CEL cannot
// hold goes to the dead-letter queue whole, with an error naming the
// value, and n as the source wrote it; the others are written; a field
// no expression reads passes through as written.
func TestHugeNumbersAreNeverRoundedThroughCEL(t *testing.T) {
	for _, cmd := range []string{"run", "worker"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			writeConfig(t, dir, "in.jsonl", `{"id":1,"n":99999999999999999999,"big":123456789012345678901234567890}`+"\n"+
				`{"id":2,"n":5,"big":123456789012345678901234567890}`+"\n"+
				`{"id":3,"n":0.12345678901234567891,"big":1}`+"\n")
			path := writeConfig(t, dir, "p.toml", celPipeline(`
[[pipelines.p.transforms]]
type = "map"
fields = { pair = "[record.n, record.id]" }
`))
			env := []string{"AGORA_DISTRIBUTED_REDIS_URL="}
			if cmd == "run" {
				if code, _, stderr := runAgora(t, dir, env, "run", "--config", path); code != 0 {
					t.Fatalf("agora run: exit %d\n%s", code, stderr)
				}
			} else {
				// A pool of once pipelines stops by itself when they are done.
				p := startAgora(t, dir, env, "worker", "--config", path, "-health-port", "0")
				if code := p.wait(t, 30*time.Second); code != 0 {
					t.Fatalf("agora worker: exit %d\n%s", code, p.stderr)
				}
			}
			out, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if want := `"big":123456789012345678901234567890`; !strings.Contains(string(out), want) || !strings.Contains(string(out), `"pair":[5,2]`) || strings.Count(string(out), "\n") != 1 {
				t.Fatalf("written %s\nwant only id 2, with pair [5,2] and %s", out, want)
			}
			dead, err := os.ReadFile(filepath.Join(dir, "dead.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				`"n":99999999999999999999`, "field value 99999999999999999999 does not fit a 64-bit integer",
				`"n":0.12345678901234567891`, "field value 0.12345678901234567891 has more digits than a double holds",
			} {
				if !strings.Contains(string(dead), want) {
					t.Errorf("dead letters lack %s:\n%s", want, dead)
				}
			}
			if strings.Contains(string(out)+string(dead), "1e+20") || strings.Contains(string(out)+string(dead), "100000000000000000000") {
				t.Fatalf("a rounded value was written:\n%s\n%s", out, dead)
			}
		})
	}
}
