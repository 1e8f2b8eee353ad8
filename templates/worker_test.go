package templates

import (
	"errors"
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"time"
)

func pipeline(id, factory string, s Schedule) Pipeline {
	return Pipeline{
		ID: id, Const: "Pipeline" + factory, Factory: factory, Source: "p.go", Schedule: s,
		Result: TypeRef{Path: RuntimePath, PkgName: "runtime", Name: "Pipeline"},
	}
}

func render(t *testing.T, w Worker) string {
	t.Helper()
	out, err := Render(w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "worker.go", out, parser.AllErrors); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	return string(out)
}

func TestRenderIsDeterministicAndSorted(t *testing.T) {
	a := pipeline("b-second", "B", Schedule{Kind: Every, Interval: time.Minute})
	b := pipeline("a-first", "A", Schedule{Kind: Once})
	w1 := Worker{PackagePath: "example.com/p", PackageName: "p", Pipelines: []Pipeline{a, b}}
	w2 := Worker{PackagePath: "example.com/p", PackageName: "p", Pipelines: []Pipeline{b, a}}
	out1, out2 := render(t, w1), render(t, w2)
	if out1 != out2 {
		t.Fatalf("input order changed the output:\n%s\n---\n%s", out1, out2)
	}
	if strings.Index(out1, "FactoryOf(A)") > strings.Index(out1, "FactoryOf(B)") {
		t.Fatal("pipelines are not sorted by id")
	}
	if !strings.HasPrefix(out1, Header+"\n\npackage p\n") {
		t.Fatalf("header missing:\n%s", out1)
	}
}

func TestRenderDurations(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour: "runtime.Every(time.Hour)", 90 * time.Second: "runtime.Every(90 * time.Second)",
		36 * time.Hour: "runtime.Every(36 * time.Hour)", 1500 * time.Millisecond: "runtime.Every(1500 * time.Millisecond)",
	} {
		out := render(t, Worker{PackagePath: "x/p", PackageName: "p", Pipelines: []Pipeline{pipeline("a", "A", Schedule{Kind: Every, Interval: d})}})
		if !strings.Contains(out, want) {
			t.Errorf("%v: want %s in\n%s", d, want, out)
		}
	}
}

func TestRenderDistributedModes(t *testing.T) {
	w := Worker{PackagePath: "x/p", PackageName: "p", Pipelines: []Pipeline{pipeline("a", "A", Schedule{Kind: Continuous})}}
	w.Distributed = DistributedOff
	if out := render(t, w); strings.Contains(out, DistributedPath) || !strings.Contains(out, "runtime.NewWorkerPool()") {
		t.Errorf("off imports distributed or passes options:\n%s", out)
	}
	w.Distributed = DistributedRequired
	if out := render(t, w); !strings.Contains(out, "distributed.CoordinatorFromEnv(distributed.ModeRequired)") || !strings.Contains(out, "runtime.NewWorkerPool(coordinator)") {
		t.Errorf("required does not ask for a required coordinator:\n%s", out)
	}
	w.Distributed = DistributedAuto
	out := render(t, w)
	if !strings.Contains(out, "distributed.CoordinatorFromEnv(distributed.ModeAuto)") || !strings.Contains(out, "runtime.NewWorkerPool(coordinator)") {
		t.Errorf("auto does not ask for an optional coordinator:\n%s", out)
	}
	// The distributed package's errors carry their own prefix; wrapping
	// them again would repeat it.
	if strings.Contains(out, "Errorf") || !strings.Contains(out, "return nil, err\n") {
		t.Errorf("GetWorker rewraps the coordinator's error:\n%s", out)
	}
}

func TestRenderAvoidsTakenNames(t *testing.T) {
	w := Worker{PackagePath: "x/p", PackageName: "p", Taken: []string{"runtime", "time", "agoratime"},
		Pipelines: []Pipeline{pipeline("a", "A", Schedule{Kind: Every, Interval: time.Minute})}}
	out := render(t, w)
	for _, want := range []string{`agoraruntime "github.com/agora-etl/agora/runtime"`, `agoratime2 "time"`, "agoraruntime.Every(agoratime2.Minute)"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %s in\n%s", want, out)
		}
	}
}

func TestRenderRejectsInvalidModels(t *testing.T) {
	ok := pipeline("a", "A", Schedule{Kind: Once})
	for name, w := range map[string]Worker{
		"no package":   {Pipelines: []Pipeline{ok}},
		"duplicate id": {PackagePath: "x", PackageName: "p", Pipelines: []Pipeline{ok, ok}},
		"no schedule":  {PackagePath: "x", PackageName: "p", Pipelines: []Pipeline{pipeline("a", "A", Schedule{})}},
		"zero every":   {PackagePath: "x", PackageName: "p", Pipelines: []Pipeline{pipeline("a", "A", Schedule{Kind: Every})}},
		"empty cron":   {PackagePath: "x", PackageName: "p", Pipelines: []Pipeline{pipeline("a", "A", Schedule{Kind: Cron, Expr: " "})}},
	} {
		if _, err := Render(w); !errors.Is(err, ErrInvalidModel) {
			t.Errorf("%s: err = %v, want ErrInvalidModel", name, err)
		}
	}
}
