package kafka

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
)

func TestSourceConfigValidate(t *testing.T) {
	ok := SourceConfig{Brokers: []string{"127.0.0.1:9092"}, Topic: "t", Group: "g"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range []struct {
		change func(*SourceConfig)
		want   string
	}{
		{func(c *SourceConfig) { c.Brokers = nil }, "brokers: is empty"},
		{func(c *SourceConfig) { c.Brokers = []string{"kafka"} }, `brokers: entry 0, "kafka", is not host:port`},
		{func(c *SourceConfig) { c.Brokers = []string{"h:0"} }, "0 is not a port"},
		{func(c *SourceConfig) { c.Topic = "" }, "topic: is missing"},
		{func(c *SourceConfig) { c.Topics = []string{""} }, "topics: entry 0 is empty"},
		{func(c *SourceConfig) { c.Group = "" }, "group: is empty"},
		{func(c *SourceConfig) { c.Start = "$" }, `start: "$" is not "earliest" or "latest"`},
		{func(c *SourceConfig) { c.Block = 5 }, "block: 5ns is less than a millisecond"},
		{func(c *SourceConfig) { c.Block = etl.Duration(-time.Second) }, "block: -1s is negative"},
		{func(c *SourceConfig) { c.KeyField, c.IDField = "k", "k" }, `id_field: "k" is also key_field`},
	} {
		c := ok
		tc.change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate = %v, want %q", err, tc.want)
		}
	}
	// Topics alone suffice; repeats are read once.
	c := SourceConfig{Brokers: []string{"[::1]:9092"}, Topics: []string{"a", "b", "a"}, Topic: "b", Group: "g"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.topics(), ","); got != "b,a" {
		t.Errorf("topics %s", got)
	}
}

func TestSinkConfigValidate(t *testing.T) {
	if err := (SinkConfig{Brokers: []string{"127.0.0.1:9092"}, Topic: "t"}).Validate(); err != nil {
		t.Fatal(err)
	}
	err := SinkConfig{}.Validate()
	if err == nil || !strings.Contains(err.Error(), "brokers: is empty") || !strings.Contains(err.Error(), "topic: is empty") {
		t.Fatalf("Validate = %v", err)
	}
	if _, err := NewSink(SinkConfig{}); err == nil {
		t.Fatal("NewSink took an empty config")
	}
	if _, err := NewSource(SourceConfig{}); err == nil {
		t.Fatal("NewSource took an empty config")
	}
}

// TestDocsDescribeEveryKey keeps docs/etl.md's key tables in step with the
// configuration structs.
func TestDocsDescribeEveryKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "etl.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for section, typ := range map[string]reflect.Type{"### Source `kafka`": reflect.TypeFor[SourceConfig](), "### Sink `kafka`": reflect.TypeFor[SinkConfig]()} {
		_, text, ok := strings.Cut(doc, section)
		if !ok {
			t.Fatalf("docs/etl.md has no %q section", section)
		}
		text, _, _ = strings.Cut(text, "\n### ")
		for i := range typ.NumField() {
			key := typ.Field(i).Tag.Get("toml")
			if !strings.Contains(text, "| `"+key+"` |") {
				t.Errorf("docs/etl.md, %s: no row for `%s`", section, key)
			}
		}
	}
}
