package gen

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/agora-etl/agora/templates"
)

// scanSource scans one file and returns what the scanner found.
func scanSource(t *testing.T, src string) (*token.FileSet, scanned) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var ds Diagnostics
	s := scanFiles(fset, []*ast.File{f}, &ds)
	if ds.Len() != 0 || len(s.schedules) != 2 {
		t.Fatalf("scan: %d diagnostics, %d schedules", ds.Len(), len(s.schedules))
	}
	return fset, s
}

const twoFactories = `package p

//agora:schedule once
func A() {}

//agora:schedule continuous
func B() {}
`

func TestAccountAcceptsEveryDirectiveAccountedFor(t *testing.T) {
	fset, s := scanSource(t, twoFactories)
	a, b := s.schedules[0], s.schedules[1]
	for name, tc := range map[string]struct {
		fates   map[*directive]fate
		compile bool
		model   *templates.Worker
	}{
		"both pipelines":           {map[*directive]fate{a: fatePipeline, b: fatePipeline}, false, &templates.Worker{Pipelines: make([]templates.Pipeline, 2)}},
		"one diagnosed":            {map[*directive]fate{a: fatePipeline, b: fateDiagnosed}, false, nil},
		"compile errors explain b": {map[*directive]fate{a: fateDiagnosed, b: fateCompileError}, true, nil},
	} {
		if err := account(fset, s, tc.fates, tc.compile, tc.model); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAccountFailsLoudlyOnADroppedDirective(t *testing.T) {
	fset, s := scanSource(t, twoFactories)
	a, b := s.schedules[0], s.schedules[1]
	for name, tc := range map[string]struct {
		fates   map[*directive]fate
		compile bool
		model   *templates.Worker
		want    string
	}{
		// The bug of a package that imports neither context nor the
		// runtime: B checked "not ok", said nothing, and the model lacked it.
		"dropped silently":                           {map[*directive]fate{a: fatePipeline}, false, &templates.Worker{Pipelines: make([]templates.Pipeline, 1)}, "p.go:6:1: //agora:schedule on B"},
		"deferred to compile errors that never came": {map[*directive]fate{a: fateDiagnosed, b: fateCompileError}, false, nil, "on B"},
		"model lost a pipeline":                      {map[*directive]fate{a: fatePipeline, b: fatePipeline}, false, &templates.Worker{Pipelines: make([]templates.Pipeline, 1)}, "2 directives became pipelines, but the model has 1"},
	} {
		err := account(fset, s, tc.fates, tc.compile, tc.model)
		if !errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: account = %v, want ErrInternal mentioning %q", name, err, tc.want)
		}
	}
	// A rejected comment without a diagnostic breaks the rule too.
	s.silent = append(s.silent, a.Comment)
	if err := account(fset, s, map[*directive]fate{a: fatePipeline, b: fatePipeline}, false, &templates.Worker{Pipelines: make([]templates.Pipeline, 2)}); !errors.Is(err, ErrInternal) {
		t.Errorf("silent rejection: account = %v", err)
	}
}
