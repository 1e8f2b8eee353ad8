package config

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
)

type validatedConfig struct {
	Path  string `toml:"path"`
	Size  int    `toml:"size"`
	Inner struct {
		Depth int `toml:"depth"`
	} `toml:"inner"`
}

func (c *validatedConfig) Validate() error {
	return errors.Join(
		etl.FieldErrorf("path", "%q does not exist", c.Path),
		etl.FieldErrorf("inner.depth", "must be even"),
		errors.New("the component as a whole is unhappy"),
	)
}

func componentRegistry() *etl.Registry {
	r := etl.NewRegistry()
	etl.RegisterSource(r, "checked", "validates", func(context.Context, validatedConfig) (etl.Source, error) {
		return nil, errors.New("unused")
	})
	etl.RegisterSink(r, "plain", "no keys", func(context.Context, struct{}) (etl.Sink, error) {
		return nil, errors.New("unused")
	})
	return r
}

func parseComponent(t *testing.T, table string, kind etl.Kind) (Component, Diagnostics) {
	t.Helper()
	var c Component
	ds := check(t, "[c]\n"+table, func(d *decoder, m map[string]any) {
		d.registry = componentRegistry()
		c = d.component(m["c"].(map[string]any), path{"c"}, kind)
	})
	return c, ds
}

func TestComponentValidateErrorsArePlacedAtTheirKeys(t *testing.T) {
	c, ds := parseComponent(t, "type = \"checked\"\npath = \"/nope\"\nsize = 3\ninner = { depth = 3 }\n", etl.KindSource)
	want := []string{
		`t.toml:1:2: c: the component as a whole is unhappy`,
		`t.toml:3:1: c.path: "/nope" does not exist`,
		`t.toml:5:11: c.inner.depth: must be even`,
	}
	if got := ds.Error(); got != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if c.Config != nil {
		t.Errorf("a component that fails Validate has a config: %+v", c.Config)
	}
}

type decodedConfig struct {
	Size    int          `toml:"size"`
	Ratio   float32      `toml:"ratio"`
	Records []etl.Record `toml:"records"`
	Inner   struct {
		Depth int8 `toml:"depth"`
	} `toml:"inner"`
}

func TestComponentDecodesIntoItsConfig(t *testing.T) {
	r := etl.NewRegistry()
	etl.RegisterSource(r, "ok", "", func(context.Context, decodedConfig) (etl.Source, error) { return nil, errors.New("unused") })
	decode := func(table string) (Component, Diagnostics) {
		var c Component
		ds := check(t, "[c]\ntype = \"ok\"\n"+table, func(d *decoder, m map[string]any) {
			d.registry = r
			c = d.component(m["c"].(map[string]any), path{"c"}, etl.KindSource)
		})
		return c, ds
	}
	c, ds := decode("size = 42\nratio = 1\nrecords = [{id = 1, tags = [\"a\"]}]\ninner.depth = 2\n")
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	cfg := c.Config.(*decodedConfig)
	if cfg.Size != 42 || cfg.Ratio != 1 || cfg.Inner.Depth != 2 || len(cfg.Records) != 1 || cfg.Records[0]["id"] != int64(1) {
		t.Errorf("config = %+v", cfg)
	}
	if c.Spec == nil || c.Spec.Type != "ok" || c.Type != "ok" || c.Kind != etl.KindSource {
		t.Errorf("component = %+v", c)
	}
	// What only the decoder knows (an int8 overflows) is still placed at
	// its key.
	c, ds = decode("inner.depth = 300\n")
	if len(ds) != 1 || ds[0].Line != 3 || ds[0].Col != 15 || !strings.Contains(ds[0].Message, "c.inner.depth: ") || c.Config != nil {
		t.Errorf("overflow: %v, config %v", ds, c.Config)
	}
}

func TestComponentTypeProblems(t *testing.T) {
	for _, tc := range []struct {
		table string
		kind  etl.Kind
		want  string
	}{
		{"path = \"x\"", etl.KindSource, `t.toml:1:2: c: type is missing: add type = "..." (known source types: checked)`},
		{"type = \"plain\"", etl.KindSource, `t.toml:2:8: c.type: "plain" is a sink, not a source; known source types: checked`},
		{"type = \"chekced\"", etl.KindSource, `t.toml:2:8: c.type: unknown source type "chekced" (did you mean "checked"?); known source types: checked`},
		{"type = \"zzzzzz\"", etl.KindSink, `t.toml:2:8: c.type: unknown sink type "zzzzzz"; known sink types: plain`},
		{"type = true", etl.KindSink, `t.toml:2:8: c.type: want a string, got a boolean`},
		{"type = \"plain\"\nextra = 1", etl.KindSink, `t.toml:3:1: c: unknown key "extra"; known keys: name, type`},
	} {
		_, ds := parseComponent(t, tc.table, tc.kind)
		if ds.Error() != tc.want {
			t.Errorf("%q:\n%s\nwant\n%s", tc.table, ds.Error(), tc.want)
		}
	}
}

func TestComponentURLsAreRedacted(t *testing.T) {
	r := etl.NewRegistry()
	type cfg struct {
		URL    string `toml:"url"`
		Path   string `toml:"path"`
		Name   string `toml:"name"`
		Secret string `toml:"secret"`
	}
	etl.RegisterSink(r, "s", "", func(context.Context, cfg) (etl.Sink, error) { return nil, errors.New("unused") })
	var c Component
	ds := check(t, "[c]\ntype = \"s\"\nurl = \"redis://u:pw@h:1/0\"\nname = \"n\"\npath = \"out.jsonl\"\nsecret = \"hunter2\"\n", func(d *decoder, m map[string]any) {
		d.registry = r
		c = d.component(m["c"].(map[string]any), path{"c"}, etl.KindSink)
	})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	if got := c.describe(nil); got != "s (path=out.jsonl, url=redis://u:xxxxx@h:1/0)" {
		t.Errorf("describe = %q", got)
	}
}
