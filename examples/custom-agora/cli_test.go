package customagora_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/cli"
	customagora "github.com/agora-etl/agora/examples/custom-agora"
)

func TestTheAgoraCommandRunsTheCustomComponent(t *testing.T) {
	reg := cli.Builtins()
	customagora.Register(reg)
	var out, errOut strings.Builder
	if code := cli.Main([]string{"check", "--config", "pipelines.toml"}, cli.WithRegistry(reg), cli.WithOutput(&out, &errOut)); code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	// Without the registration the same file is invalid.
	out.Reset()
	errOut.Reset()
	if code := cli.Main([]string{"check", "--config", "pipelines.toml"}, cli.WithOutput(&out, &errOut)); code != 1 ||
		!strings.Contains(out.String()+errOut.String(), `unknown source type "sequence"`) {
		t.Fatalf("check without the component: exit %d\n%s%s", code, out.String(), errOut.String())
	}

	// agora run writes the sequence to a file sink.
	dst := filepath.Join(t.TempDir(), "out.jsonl")
	file := filepath.Join(t.TempDir(), "run.toml")
	src, err := os.ReadFile("pipelines.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(src), `type = "stdout"`, "type = \"file\"\npath = \""+dst+"\"", 1)
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := cli.Main([]string{"run", "--config", file}, cli.WithRegistry(reg), cli.WithOutput(&out, &errOut)); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if b, _ := os.ReadFile(dst); string(b) != "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n" {
		t.Fatalf("out = %q", b)
	}
}
