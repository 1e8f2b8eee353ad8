package configonly_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/cli"
)

func agora(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(args, cli.WithOutput(&stdout, &stderr))
	return code, stdout.String(), stderr.String()
}

func TestExampleFilesPassCheck(t *testing.T) {
	for _, file := range []string{"pipelines.toml", "files.toml"} {
		if code, _, stderr := agora(t, "check", "--config", file); code != 0 {
			t.Errorf("agora check --config %s: exit %d\n%s", file, code, stderr)
		}
	}
}

func TestFilesExampleCopiesTheCSVOrders(t *testing.T) {
	// The file source remembers what it read beside the config file
	// (.agora/read-state): run a copy, so every run starts afresh.
	dir := t.TempDir()
	for _, name := range []string{"files.toml", "data/orders-1.csv", "data/orders-2.csv"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	t.Setenv("OUT_DIR", out)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	if code, _, stderr := agora(t, "run", "--config", filepath.Join(dir, "files.toml")); code != 0 {
		t.Fatalf("agora run: exit %d\n%s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "orders.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(got) != 3 || !strings.Contains(got[0], `"customer":"ada"`) || !strings.Contains(got[2], `"customer":"linus"`) {
		t.Fatalf("orders.jsonl:\n%s\nwant the three orders of data/*.csv in file order", data)
	}
}
