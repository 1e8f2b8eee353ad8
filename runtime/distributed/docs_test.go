package distributed

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDocsSettingsTableMatchesConfig keeps the Settings table of
// docs/distributed.md in step with the variables LoadConfig reads: every
// Config field has a row naming its Options field and its variable, and
// every AGORA_DISTRIBUTED_* variable of the table is one LoadConfig reads.
func TestDocsSettingsTableMatchesConfig(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "distributed.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Settings\n")
	if !ok {
		t.Fatal("docs/distributed.md has no Settings section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{} // variable → row
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "`"+EnvPrefix+"_") {
			continue
		}
		rows[strings.Trim(strings.TrimSpace(cells[2]), "`")] = line
	}
	read := map[string]bool{}
	cfg := reflect.TypeOf(Config{})
	for i := 0; i < cfg.NumField(); i++ {
		f := cfg.Field(i)
		env := EnvPrefix + "_" + f.Tag.Get("envconfig")
		read[env] = true
		row, ok := rows[env]
		if !ok {
			t.Errorf("docs/distributed.md's Settings table has no row for %s", env)
			continue
		}
		if _, ok := reflect.TypeOf(Options{}).FieldByName(f.Name); !ok {
			t.Errorf("Config.%s has no Options field of the same name", f.Name)
		}
		if !strings.HasPrefix(row, "| `"+f.Name+"` |") {
			t.Errorf("docs/distributed.md: the row of %s does not start with the option `%s`:\n%s", env, f.Name, row)
		}
	}
	for env := range rows {
		if !read[env] {
			t.Errorf("docs/distributed.md documents %s, which LoadConfig does not read", env)
		}
	}
}
