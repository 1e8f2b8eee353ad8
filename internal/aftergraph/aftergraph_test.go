package aftergraph

import (
	"reflect"
	"testing"
)

func TestCycles(t *testing.T) {
	cases := []struct {
		name  string
		after map[string][]string
		roots []string
		want  []Cycle
	}{
		{"none", map[string][]string{"load": {"extract"}, "extract": nil}, []string{"load", "extract"}, nil},
		{"two", map[string][]string{"ping": {"pong"}, "pong": {"ping"}}, []string{"ping", "pong"},
			[]Cycle{{From: "pong", Edge: 0, Path: []string{"ping", "pong", "ping"}}}},
		{"three, found once from any root", map[string][]string{"a": {"c"}, "b": {"a"}, "c": {"b"}}, []string{"b", "a", "c"},
			[]Cycle{{From: "c", Edge: 0, Path: []string{"b", "a", "c", "b"}}}},
		{"the closing edge's index", map[string][]string{"a": {"x", "b"}, "b": {"y", "a"}, "x": nil}, []string{"a"},
			[]Cycle{{From: "b", Edge: 1, Path: []string{"a", "b", "a"}}}},
		{"unknown upstreams and itself are left out", map[string][]string{"a": {"a", "ghost"}}, []string{"a"}, nil},
		{"two cycles sharing a pipeline", map[string][]string{"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}, []string{"a"},
			[]Cycle{{From: "b", Edge: 0, Path: []string{"a", "b", "a"}}, {From: "c", Edge: 0, Path: []string{"a", "c", "a"}}}},
		{"a root that is not known", map[string][]string{"a": {"b"}}, []string{"zz", "a"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Cycles(tc.roots, func(id string) ([]string, bool) {
				ups, ok := tc.after[id]
				return ups, ok
			})
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Cycles = %+v, want %+v", got, tc.want)
			}
		})
	}
}
