package config

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"

	_ "modernc.org/sqlite"
)

// TestParamsAreDeclaredAndEveryReadIsChecked: params = { ... } declares
// run parameters; a :param_ in a SQL source or a params. in a CEL
// expression that nothing declares is a diagnostic at the key that reads
// it, as are a bad name and a value that is not a string.
func TestParamsAreDeclaredAndEveryReadIsChecked(t *testing.T) {
	doc := `format = "agora/v1"
[pipelines.ok]
params = { day = "2026-01-01", note = "" }
source = { type = "sqlite", path = "a.db", query = "SELECT :param_day AS day, :param_note AS note" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
transforms = [{ type = "filter", expr = "params.day != ''" }, { type = "map", fields = { d = "params['note']" } }]

[pipelines.bad]
params = { day = "2026-01-01", "a-b" = "x", n = 3 }
source = { type = "sqlite", path = "a.db", query = "SELECT :param_day, :param_month" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
transforms = [{ type = "filter", expr = "params.year == '2026'" }, { type = "map", fields = { d = "params.week" } }]

[pipelines.none]
source = { type = "sqlite", path = "a.db", query = "SELECT :param_day" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
`
	_, err := Parse("c.toml", []byte(doc))
	var diags Diagnostics
	if !errors.As(err, &diags) {
		t.Fatalf("err = %v, want diagnostics", err)
	}
	text := err.Error()
	for _, want := range []string{
		`c.toml:10:32: pipelines.bad.params.a-b: parameter name "a-b" is not an identifier`,
		`c.toml:10:`, `pipelines.bad.params.n: `,
		`c.toml:11:`, `pipelines.bad.source.query: parameter month is not declared: add it with a default to the pipeline, params = { month = "..." } in [pipelines.bad] (declared: day)`,
		`c.toml:14:`, `pipelines.bad.transforms[0].expr: parameter year is not declared`,
		`pipelines.bad.transforms[1].fields.d: parameter week is not declared`,
		`c.toml:17:`, `pipelines.none.source.query: parameter day is not declared: add it with a default to the pipeline, params = { day = "..." } in [pipelines.none] (declared: none)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "pipelines.ok") {
		t.Errorf("the declared pipeline has diagnostics:\n%s", text)
	}
	if n := len(diags); n != 6 {
		t.Errorf("%d diagnostics, want 6:\n%s", n, text)
	}
}

// TestRunParamsFillDefaultsAndRefuseUndeclared: a scheduled run reads the
// defaults, a trigger overrides some, and a trigger's undeclared
// parameter fails the run naming it and the declared ones.
func TestRunParamsFillDefaultsAndRefuseUndeclared(t *testing.T) {
	p := &Pipeline{ID: "p", Params: map[string]string{"day": "2026-01-01", "n": "1"}}
	got, err := p.runParams(context.Background())
	if err != nil || !maps.Equal(got, p.Params) {
		t.Fatalf("scheduled: %v, %v", got, err)
	}
	got, err = p.runParams(runtime.ContextWithParams(context.Background(), map[string]string{"day": "2026-02-02"}))
	if err != nil || !maps.Equal(got, map[string]string{"day": "2026-02-02", "n": "1"}) || p.Params["day"] != "2026-01-01" {
		t.Fatalf("triggered: %v, %v (defaults %v)", got, err, p.Params)
	}
	_, err = p.runParams(runtime.ContextWithParams(context.Background(), map[string]string{"dya": "x", "zz": "y"}))
	if !errors.Is(err, ErrUndeclaredParam) || !strings.Contains(err.Error(), "dya, zz (declared in its params: day, n)") {
		t.Fatalf("undeclared: %v", err)
	}
	if got, err := (&Pipeline{}).runParams(context.Background()); got != nil || err != nil {
		t.Fatalf("none declared, none given: %v, %v", got, err)
	}
}

// TestRunOfAPipelineWithParamsWritesThem: the defaults reach a scheduled
// run's :param_ values and CEL params, a trigger's values a triggered
// run's.
func TestRunOfAPipelineWithParamsWritesThem(t *testing.T) {
	dir := t.TempDir()
	doc := `format = "agora/v1"
[pipelines.daily]
params = { day = "2026-01-01", who = "cron" }
source = { type = "sqlite", path = "in.db", query = "SELECT :param_day AS day" }
sinks = [{ type = "sqlite", path = "out.db", table = "days", mode = "insert", allow_unfenced = true }]
schedule = { mode = "once" }
transforms = [{ type = "map", fields = { who = "params.who" } }]
`
	f, err := Parse(filepath.Join(dir, "c.toml"), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "out.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE days (day TEXT, who TEXT)"); err != nil {
		t.Fatal(err)
	}
	if sum := f.Summary(); !strings.Contains(sum, "\n  params: day=2026-01-01 who=cron (defaults)\n") {
		t.Errorf("summary lacks the params:\n%s", sum)
	}
	p := f.Pipeline("daily")
	for _, ctx := range []context.Context{context.Background(),
		runtime.ContextWithParams(context.Background(), map[string]string{"day": "2026-03-04", "who": "ops"})} {
		pl, err := p.Factory()(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := pl.Run(runtime.ContextWithLease(ctx, runtime.Lease{PipelineID: "daily", RunNumber: runtime.RunNumberOnce})); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Query("SELECT day, who FROM days ORDER BY day")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var day, who string
		if err := rows.Scan(&day, &who); err != nil {
			t.Fatal(err)
		}
		got = append(got, day+"/"+who)
	}
	if strings.Join(got, " ") != "2026-01-01/cron 2026-03-04/ops" {
		t.Fatalf("rows %v", got)
	}
	_, err = p.Factory()(runtime.ContextWithParams(context.Background(), map[string]string{"dya": "x"}))
	if !errors.Is(err, ErrUndeclaredParam) || !strings.Contains(err.Error(), `pipeline "daily": `) {
		t.Fatalf("undeclared: %v", err)
	}
}
