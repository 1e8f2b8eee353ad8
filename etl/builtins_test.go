package etl_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
)

func TestBuiltinsRegistersEveryComponent(t *testing.T) {
	r := etl.Builtins()
	if got := r.Names(etl.KindSource); !slices.Equal(got, []string{"file", "iterable", "redis_stream"}) {
		t.Fatalf("sources %v", got)
	}
	if got := r.Names(etl.KindSink); !slices.Equal(got, []string{"file", "redis_stream", "stdout"}) {
		t.Fatalf("sinks %v", got)
	}
	// A fresh registry each time: extending one leaves the next alone.
	etl.RegisterSink(r, "extra", "", func(context.Context, struct{}) (etl.Sink, error) { return nil, nil })
	if slices.Contains(etl.Builtins().Names(etl.KindSink), "extra") {
		t.Fatal("Builtins shares its registry")
	}
	key := regexp.MustCompile(`^[a-z][a-z_]*$`)
	for _, kind := range []etl.Kind{etl.KindSource, etl.KindSink} {
		for _, spec := range etl.Builtins().Specs(kind) {
			if spec.Summary == "" {
				t.Errorf("%s %s has no summary", kind, spec.Type)
			}
			ct := spec.ConfigType()
			for i := 0; i < ct.NumField(); i++ {
				f := ct.Field(i)
				if !f.IsExported() {
					continue // not a key: set by the loader, such as a directory
				}
				if tag := f.Tag.Get("toml"); !key.MatchString(tag) {
					t.Errorf("%s %s: field %s has toml tag %q", kind, spec.Type, f.Name, tag)
				}
			}
		}
	}
}

func TestBuiltinsBuildFromDecodedConfigs(t *testing.T) {
	r := etl.Builtins()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	out := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(in, []byte("{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"b\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	srcSpec, err := r.Lookup(etl.KindSource, "file")
	if err != nil {
		t.Fatal(err)
	}
	srcCfg := srcSpec.NewConfig()
	srcCfg.(*etl.FileSourceConfig).Path = in
	if err := srcSpec.Validate(srcCfg); err != nil {
		t.Fatal(err)
	}
	src, err := srcSpec.BuildSource(ctx, srcCfg)
	if err != nil {
		t.Fatal(err)
	}
	sinkSpec, _ := r.Lookup(etl.KindSink, "file")
	sinkCfg := sinkSpec.NewConfig()
	sinkCfg.(*etl.FileSinkConfig).Path = out
	sink, err := sinkSpec.BuildSink(ctx, sinkCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := etl.New(src, []etl.Sink{sink}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "id,name\n1,a\n2,b\n" {
		t.Fatalf("out = %q", b)
	}

	// A bad configuration is a *FieldError naming its key, from Validate
	// and from the constructor alike.
	bad := sinkSpec.NewConfig()
	bad.(*etl.FileSinkConfig).Path = "out.txt"
	var fe *etl.FieldError
	if err := sinkSpec.Validate(bad); !errors.As(err, &fe) || fe.Key != "format" {
		t.Fatalf("Validate: %v", err)
	}
	if _, err := sinkSpec.BuildSink(ctx, bad); !errors.As(err, &fe) || !strings.Contains(err.Error(), `sink "file"`) {
		t.Fatalf("BuildSink: %v", err)
	}

	itSpec, _ := r.Lookup(etl.KindSource, "iterable")
	itCfg := itSpec.NewConfig()
	itCfg.(*etl.IterableSourceConfig).Records = []map[string]any{{"id": int64(1)}}
	it, err := itSpec.BuildSource(ctx, itCfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := it.Read(ctx, 10)
	if err != nil || len(b.Records) != 1 || b.Records[0]["id"] != int64(1) {
		t.Fatalf("iterable: %v %v", b.Records, err)
	}
	stdoutSpec, _ := r.Lookup(etl.KindSink, "stdout")
	if s, err := stdoutSpec.BuildSink(ctx, stdoutSpec.NewConfig()); err != nil || s.(*etl.StdoutSink).Name() != "stdout" {
		t.Fatalf("stdout: %v %v", s, err)
	}
}
