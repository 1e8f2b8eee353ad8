package config_test

import (
	"fmt"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/etl"
)

// Parse checks an agora/v1 document held in memory; WithLookupEnv gives
// the ${VAR} references their values in place of the process environment.
func ExampleParse() {
	doc := `format = "agora/v1"

[pipelines.orders.source]
type = "iterable"
records = [{id = 1}, {id = 2}]

[pipelines.orders.schedule]
mode = "every"
minutes = 15

[[pipelines.orders.sinks]]
type = "stdout"

[pipelines.nightly.source]
type = "iterable"
records = [{region = "${REGION}"}]

[pipelines.nightly.schedule]
mode = "cron"
expr = "0 2 * * *"

[[pipelines.nightly.sinks]]
type = "stdout"
`
	env := map[string]string{"REGION": "eu"}
	f, err := config.Parse("pipelines.toml", []byte(doc), config.WithLookupEnv(func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range f.Pipelines {
		fmt.Printf("%s: %s, source %s, sink %s\n", p.ID, p.Schedule, p.Source.Type, p.Sinks[0].Type)
	}
	nightly := f.Pipeline("nightly").Source.Config.(*etl.IterableSourceConfig)
	fmt.Println("nightly records:", nightly.Records)
	// Output:
	// orders: every=15m0s, source iterable, sink stdout
	// nightly: cron="0 2 * * *", source iterable, sink stdout
	// nightly records: [map[region:eu]]
}
