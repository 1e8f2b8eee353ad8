package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
)

// textDuration decodes from text only, like the components' Duration.
type textDuration time.Duration

func (d *textDuration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = textDuration(v)
	return err
}

type embedded struct {
	Shared string `toml:"shared"`
}

type schemaConfig struct {
	embedded
	Name     string        `toml:"name,omitempty"`
	Plain    int           // no tag: the field name
	Skipped  string        `toml:"-"`
	hidden   string        //nolint:unused // unexported fields are not keys
	Wait     time.Duration `toml:"wait"`
	When     time.Time     `toml:"when"`
	Ratio    float64       `toml:"ratio"`
	Records  []etl.Record  `toml:"records"`
	Anything any           `toml:"anything"`
	Nodes    []struct {
		Addr string `toml:"addr"`
	} `toml:"nodes"`
	Labels map[string]int `toml:"labels"`
	Block  textDuration   `toml:"block"`
}

func TestStructFields(t *testing.T) {
	var names []string
	for _, f := range structFields(reflect.TypeFor[schemaConfig]()) {
		names = append(names, f.name)
	}
	want := "shared name Plain wait when ratio records anything nodes labels block"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("keys = %s, want %s", got, want)
	}
	_ = schemaConfig{}.hidden
}

func TestCheckStruct(t *testing.T) {
	doc := `[c]
shared = "s"
name = 5
Plain = 1
wait = "1s"
when = 2026-01-02T03:04:05Z
ratio = 1
records = [{id = 1}, {any = "thing"}]
anything = [1, "two"]
nodes = [{addr = "a"}, {adr = "b"}, {addr = 3}]
labels = { a = 1, b = "two" }
Skipped = "x"
block = 5
`
	var left map[string]any
	ds := check(t, doc, func(d *decoder, m map[string]any) {
		left = m["c"].(map[string]any)
		if d.checkStruct(left, path{"c"}, reflect.TypeFor[schemaConfig](), nil) {
			t.Error("checkStruct reported no problem")
		}
	})
	want := []string{
		`t.toml:3:8: c.name: want a string, got an integer`,
		`t.toml:5:8: c.wait: want an integer, got a string`,
		`t.toml:10:25: c.nodes[1]: unknown key "adr" (did you mean "addr"?)`,
		`t.toml:10:45: c.nodes[2].addr: want a string, got an integer`,
		`t.toml:11:23: c.labels.b: want an integer, got a string`,
		`t.toml:12:1: c: unknown key "Skipped"; known keys: Plain, anything, block, labels, name, nodes, ratio, records, shared, wait, when`,
		`t.toml:13:9: c.block: want a duration string such as "5s", got an integer`,
	}
	if got := ds.Error(); got != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	for _, k := range []string{"name", "wait", "nodes", "labels", "Skipped", "block"} {
		if _, ok := left[k]; ok {
			t.Errorf("bad key %q was not dropped", k)
		}
	}
	for _, k := range []string{"shared", "Plain", "when", "ratio", "records", "anything"} {
		if _, ok := left[k]; !ok {
			t.Errorf("good key %q was dropped", k)
		}
	}
}
