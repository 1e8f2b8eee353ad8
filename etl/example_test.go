package etl_test

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/agora-etl/agora/etl"
)

// A pipeline from inline records to standard output: one JSON object a
// line, keys sorted. A scheduled worker's factory returns such a pipeline;
// here it is run once by hand.
func ExampleNew() {
	src := etl.NewIterableSource([]etl.Record{
		{"id": 1, "customer": "ada"},
		{"id": 2, "customer": "linus"},
	})
	p := etl.New(src, []etl.Sink{etl.NewStdoutSink(os.Stdout)})
	if err := p.Run(context.Background()); err != nil {
		fmt.Println("run:", err)
	}
	// Output:
	// {"customer":"ada","id":1}
	// {"customer":"linus","id":2}
}

// countdown is a Source of its own: it reads n, n-1, ... 1 in batches of
// at most max records, then io.EOF. Its Ack is told when a batch is safe in
// every sink.
type countdown struct {
	n int
}

func (c *countdown) Read(ctx context.Context, max int) (etl.Batch, error) {
	if c.n == 0 {
		return etl.Batch{}, io.EOF
	}
	var b etl.Batch
	for ; c.n > 0 && len(b.Records) < max; c.n-- {
		b.Records = append(b.Records, etl.Record{"n": c.n})
	}
	last := b.Records[len(b.Records)-1]["n"]
	b.Ack = func(context.Context) error {
		fmt.Println("acknowledged down to", last)
		return nil
	}
	return b, nil
}

// A custom Source with etl.New; WithBatchSize sets how many records a Read
// may return.
func Example_customSource() {
	p := etl.New(&countdown{n: 3}, []etl.Sink{etl.NewStdoutSink(os.Stdout)}, etl.WithBatchSize(2))
	if err := p.Run(context.Background()); err != nil {
		fmt.Println("run:", err)
	}
	// Output:
	// {"n":3}
	// {"n":2}
	// acknowledged down to 2
	// {"n":1}
	// acknowledged down to 1
}
