package cli

import (
	"reflect"
	"testing"
)

func TestSplitFlags(t *testing.T) {
	tests := []struct {
		args     []string
		config   []string
		pipeline []string
		help     bool
		rest     []string
	}{
		{args: []string{"--config", "p.toml"}, config: []string{"p.toml"}},
		{args: []string{"-config=p.toml", "-health-port", "8081"}, config: []string{"p.toml"}, rest: []string{"-health-port", "8081"}},
		{args: []string{"-log-level=debug", "--config", "a.toml", "--pipeline", "x", "-pipeline=y"},
			config: []string{"a.toml"}, pipeline: []string{"x", "y"}, rest: []string{"-log-level=debug"}},
		{args: []string{"-h", "--config", "p.toml"}, config: []string{"p.toml"}, help: true},
		{args: []string{"--config", "p.toml", "--", "--pipeline", "z"}, config: []string{"p.toml"}, rest: []string{"--", "--pipeline", "z"}},
	}
	for _, tt := range tests {
		got, err := splitFlags(tt.args, "config", "pipeline")
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if !reflect.DeepEqual(got.values["config"], tt.config) || !reflect.DeepEqual(got.values["pipeline"], tt.pipeline) ||
			got.help != tt.help || !reflect.DeepEqual(got.rest, tt.rest) {
			t.Errorf("%q: got config %q pipeline %q help %v rest %q; want %q %q %v %q",
				tt.args, got.values["config"], got.values["pipeline"], got.help, got.rest, tt.config, tt.pipeline, tt.help, tt.rest)
		}
	}
}

func TestSplitFlagsErrors(t *testing.T) {
	if _, err := splitFlags([]string{"--config"}, "config"); err == nil || err.Error() != "flag --config needs a value" {
		t.Fatalf("missing value: err = %v", err)
	}
	f, err := splitFlags([]string{"--config", "a", "--config", "b"}, "config")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.one("config"); err == nil {
		t.Fatal("two --config values accepted")
	}
}
