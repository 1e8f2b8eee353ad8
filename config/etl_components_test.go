package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/etl"
)

// The example of every built-in component in docs/etl.md (each block is
// part of this file: TestDocsExamplesAreDecoded), decoded by the config
// loader: the toml tags are the documented keys, with the documented types.
const everyComponent = `
format = "agora/v1"

[pipelines.inline.source]
type = "iterable"
records = [{id = 1, name = "ann"}, {id = 2, name = "bob"}]

[pipelines.inline.schedule]
mode = "once"

[[pipelines.inline.sinks]]
type = "stdout"

[pipelines.files.source]
type = "file"
path = "in/*.csv"
format = "csv"

[pipelines.files.schedule]
mode = "every"
minutes = 5

[[pipelines.files.sinks]]
type = "file"
path = "out/orders.jsonl"
format = "jsonl"

[pipelines.files.dlq]
type = "file"
path = "out/rejected.jsonl"

[pipelines.events.source]
type = "redis_stream"
url = "redis://:${REDIS_PASSWORD}@127.0.0.1:6379/0"
stream = "events"
group = "agora"
consumer = "worker-1"
block = "2s"
start = "$"
claim_idle = "30s"
id_field = "_id"

[pipelines.events.schedule]
mode = "continuous"

[[pipelines.events.sinks]]
type = "redis_stream"
url = "redis://127.0.0.1:6379/1"
stream = "events-copy"
maxlen = 100000
`

func TestConfigLoaderDecodesEveryBuiltinComponent(t *testing.T) {
	env := map[string]string{"REDIS_PASSWORD": "pw"}
	f, err := config.Parse("pipelines.toml", []byte(everyComponent), config.WithRegistry(etl.Builtins()),
		config.WithLookupEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	if err != nil {
		t.Fatal(err)
	}
	inline := f.Pipeline("inline")
	it := inline.Source.Config.(*etl.IterableSourceConfig)
	if len(it.Records) != 2 || it.Records[1]["name"] != "bob" || it.Records[0]["id"] != int64(1) {
		t.Fatalf("iterable: %+v", it)
	}
	if _, ok := inline.Sinks[0].Config.(*etl.StdoutSinkConfig); !ok {
		t.Fatalf("stdout: %T", inline.Sinks[0].Config)
	}
	files := f.Pipeline("files")
	// Relative paths start at the config file's directory.
	wd, _ := os.Getwd()
	if c := *files.Source.Config.(*etl.FileSourceConfig); c.Path != filepath.Join(wd, "in/*.csv") || c.Format != "csv" {
		t.Fatalf("file source: %+v", c)
	}
	if c := *files.Sinks[0].Config.(*etl.FileSinkConfig); c != (etl.FileSinkConfig{Path: filepath.Join(wd, "out/orders.jsonl"), Format: "jsonl"}) {
		t.Fatalf("file sink: %+v", c)
	}
	if c := *files.DLQ.Config.(*etl.FileSinkConfig); c.Path != filepath.Join(wd, "out/rejected.jsonl") {
		t.Fatalf("dlq: %+v", c)
	}
	events := f.Pipeline("events")
	want := etl.RedisStreamSourceConfig{
		URL: "redis://:pw@127.0.0.1:6379/0", Stream: "events", Group: "agora", Consumer: "worker-1",
		Block: etl.Duration(2 * time.Second), Start: "$", ClaimIdle: etl.Duration(30 * time.Second), IDField: "_id",
	}
	if c := *events.Source.Config.(*etl.RedisStreamSourceConfig); c != want {
		t.Fatalf("redis_stream source: %+v", c)
	}
	if c := *events.Sinks[0].Config.(*etl.RedisStreamSinkConfig); c != (etl.RedisStreamSinkConfig{URL: "redis://127.0.0.1:6379/1", Stream: "events-copy", MaxLen: 100000}) {
		t.Fatalf("redis_stream sink: %+v", c)
	}
}

func TestConfigLoaderReportsComponentProblemsAtTheirKeys(t *testing.T) {
	bad := `format = "agora/v1"

[pipelines.p.source]
type = "redis_stream"
url = "redis://:hunter2@127.0.0.1:6379/x"
stream = "s"
group = "g"
block = 5

[pipelines.p.schedule]
mode = "once"

[[pipelines.p.sinks]]
type = "file"
path = "out.txt"
formt = "csv"
`
	_, err := config.Parse("pipelines.toml", []byte(bad), config.WithRegistry(etl.Builtins()))
	if err == nil {
		t.Fatal("bad file accepted")
	}
	msg := err.Error()
	for _, want := range []string{"pipelines.toml:8:", "block", "pipelines.toml:16:", "formt"} {
		if !strings.Contains(msg, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("the password shows:\n%s", msg)
	}
}

// TestDocsExamplesAreDecoded keeps docs/etl.md's examples of the built-in
// components the ones TestConfigLoaderDecodesEveryBuiltinComponent decodes.
func TestDocsExamplesAreDecoded(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "etl.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Built-in components\n")
	if !ok {
		t.Fatal("docs/etl.md has no Built-in components section")
	}
	section, _, _ = strings.Cut(section, "**source and sink `kafka`**")
	blocks := strings.Split(section, "```toml\n")[1:]
	if len(blocks) < 6 {
		t.Fatalf("docs/etl.md's Built-in components has %d toml blocks; want one per component", len(blocks))
	}
	for _, blk := range blocks {
		blk, _, _ = strings.Cut(blk, "```")
		if !strings.Contains(everyComponent, blk) {
			t.Errorf("docs/etl.md's example is not decoded by a test:\n%s", blk)
		}
	}
}
