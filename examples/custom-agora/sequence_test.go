package customagora_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/etl"
	customagora "github.com/agora-etl/agora/examples/custom-agora"
)

func TestASequencePipelineFromAConfigFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	file := `format = "agora/v1"

[pipelines.count.source]
type = "sequence"
count = 3
field = "n"

[pipelines.count.schedule]
mode = "once"

[[pipelines.count.sinks]]
type = "file"
path = "` + out + `"
`
	r := etl.Builtins()
	customagora.Register(r)
	f, err := config.Parse("pipelines.toml", []byte(file), config.WithRegistry(r))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Pipeline("count")
	ctx := context.Background()
	src, err := p.Source.Spec.BuildSource(ctx, p.Source.Config)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := p.Sinks[0].Spec.BuildSink(ctx, p.Sinks[0].Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := etl.New(src, []etl.Sink{sink}, etl.WithBatchSize(2)).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n" {
		t.Fatalf("out = %q", b)
	}
}

func TestSequenceKeysAreCheckedLikeBuiltinOnes(t *testing.T) {
	r := etl.Builtins()
	customagora.Register(r)
	file := `format = "agora/v1"

[pipelines.count.source]
type = "sequence"
count = -1
feild = "x"

[pipelines.count.schedule]
mode = "once"

[[pipelines.count.sinks]]
type = "stdout"
`
	_, err := config.Parse("pipelines.toml", []byte(file), config.WithRegistry(r))
	if err == nil || !strings.Contains(err.Error(), `pipelines.toml:6:1`) || !strings.Contains(err.Error(), `did you mean "field"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := customagora.NewSequence(customagora.SequenceConfig{Count: -1}); err == nil || !strings.Contains(err.Error(), "count: -1 is negative") {
		t.Fatalf("NewSequence: %v", err)
	}
}
