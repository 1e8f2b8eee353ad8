package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/kafka"
)

func registry() *etl.Registry {
	r := etl.Builtins()
	kafka.Register(r)
	return r
}

// exampleMarker stands before the full kafka example of docs/etl.md,
// minimalMarker before the minimal one of its built-in components.
const (
	exampleMarker = "<!-- kafka example, decoded by config/kafka_components_test.go -->\n```toml\n"
	minimalMarker = "<!-- kafka minimal example, decoded by config/kafka_components_test.go -->\n```toml\n"
)

// example returns the block after marker in a document, with a format
// line when it has none.
func example(t *testing.T, doc, marker string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", doc))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("%s has no %q block", doc, marker)
	}
	block, _, _ = strings.Cut(block, "```")
	if !strings.HasPrefix(block, "format =") {
		block = "format = \"agora/v1\"\n\n" + block
	}
	return block
}

func TestConfigLoaderDecodesTheKafkaComponents(t *testing.T) {
	f, err := config.Parse("docs/etl.md", []byte(example(t, "docs/etl.md", exampleMarker)), config.WithRegistry(registry()))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Pipeline("orders")
	src := *p.Source.Config.(*kafka.SourceConfig)
	want := kafka.SourceConfig{Brokers: []string{"127.0.0.1:9092", "127.0.0.1:9093"}, Topics: []string{"orders", "refunds"},
		Group: "agora-orders", Start: "latest", Block: etl.Duration(2 * time.Second), KeyField: "_key", IDField: "_id"}
	if !reflect.DeepEqual(src, want) {
		t.Fatalf("source %+v\nwant   %+v", src, want)
	}
	sink := *p.Sinks[0].Config.(*kafka.SinkConfig)
	if !reflect.DeepEqual(sink, kafka.SinkConfig{Brokers: []string{"127.0.0.1:9092"}, Topic: "orders-clean", Key: "customer_id"}) {
		t.Fatalf("sink %+v", sink)
	}
}

func TestDocsMinimalKafkaExampleDecodes(t *testing.T) {
	f, err := config.Parse("docs/etl.md", []byte(example(t, "docs/etl.md", minimalMarker)), config.WithRegistry(registry()))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Pipeline("clicks")
	if c := p.Source.Config.(*kafka.SourceConfig); c.Topic != "clicks" || c.Group != "agora" {
		t.Fatalf("source %+v", c)
	}
	if c := p.Sinks[0].Config.(*kafka.SinkConfig); c.Topic != "clicks-by-user" || c.Key != "user_id" {
		t.Fatalf("sink %+v", c)
	}
}

// TestAgoraCheckDiagnosesKafkaKeys: every kafka key is known to the
// loader, with did-you-mean for a typo, the wanted type for a wrong one,
// and Validate's word at the key.
func TestAgoraCheckDiagnosesKafkaKeys(t *testing.T) {
	bad := `format = "agora/v1"

[pipelines.p.source]
type = "kafka"
brokers = "127.0.0.1:9092"
topci = "orders"
grup = "g"
start = "newest"
block = 5
keyfield = "_key"

[pipelines.p.schedule]
mode = "continuous"

[[pipelines.p.sinks]]
type = "kafka"
brokers = ["localhost"]
topic = 7
kye = "id"
`
	_, err := config.Parse("pipelines.toml", []byte(bad), config.WithRegistry(registry()))
	if err == nil {
		t.Fatal("bad file accepted")
	}
	want := []string{
		`pipelines.toml:5:11: pipelines.p.source.brokers: want an array, got a string`,
		`pipelines.toml:6:1: pipelines.p.source: unknown key "topci" (did you mean "topic"?)`,
		`pipelines.toml:7:1: pipelines.p.source: unknown key "grup" (did you mean "group"?)`,
		`pipelines.toml:9:9: pipelines.p.source.block: want a duration string such as "5s", got an integer`,
		`pipelines.toml:10:1: pipelines.p.source: unknown key "keyfield" (did you mean "key_field"?)`,
		`pipelines.toml:18:9: pipelines.p.sinks[0].topic: want a string, got an integer`,
		`pipelines.toml:19:1: pipelines.p.sinks[0]: unknown key "kye" (did you mean "key"?)`,
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("diagnostics lack\n  %s\ngot:\n%s", w, msg)
		}
	}
	// Once the keys are right, Validate speaks, at the key.
	fixed := strings.NewReplacer(`brokers = "127.0.0.1:9092"`, `brokers = ["127.0.0.1:9092"]`, "topci", "topic", "grup", "group",
		"block = 5", `block = "5s"`, "keyfield", "key_field", "topic = 7", `topic = "out"`, "kye", "key").Replace(bad)
	_, err = config.Parse("pipelines.toml", []byte(fixed), config.WithRegistry(registry()))
	if err == nil {
		t.Fatal("bad start and broker accepted")
	}
	msg = err.Error()
	for _, w := range []string{
		`pipelines.toml:8:1: pipelines.p.source.start: "newest" is not "earliest" or "latest"`,
		`pipelines.toml:17:1: pipelines.p.sinks[0].brokers: entry 0, "localhost", is not host:port`,
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("diagnostics lack\n  %s\ngot:\n%s", w, msg)
		}
	}
}
