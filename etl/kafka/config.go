package kafka

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/agora-etl/agora/etl"
)

// Defaults of the kafka source.
const (
	// DefaultBlock is how long a read waits for records before the run ends
	// with nothing more to do.
	DefaultBlock = 5 * time.Second
	// StartEarliest makes a group without committed offsets read each
	// partition from its first record.
	StartEarliest = "earliest"
	// StartLatest makes a group without committed offsets read only records
	// produced from when it joined on.
	StartLatest = "latest"
)

// SourceConfig configures the "kafka" source.
type SourceConfig struct {
	// Brokers are the bootstrap brokers, "host:port" each.
	Brokers []string `toml:"brokers"`
	// Topic is the topic to read; Topics lists several. At least one of
	// the two is needed; both together read every topic named.
	Topic string `toml:"topic"`
	// Topics lists topics to read.
	Topics []string `toml:"topics"`
	// Group is the consumer group.
	Group string `toml:"group"`
	// Start is where a group without committed offsets starts:
	// "earliest" (the default) or "latest". Committed offsets always win.
	Start string `toml:"start"`
	// Block is how long a read waits for records (default 5s); a read that
	// gets none ends the run.
	Block etl.Duration `toml:"block"`
	// KeyField, when set, adds each record's Kafka key, as a string, under
	// this field (null for a record without a key).
	KeyField string `toml:"key_field"`
	// IDField, when set, adds "topic/partition/offset" under this field,
	// for consumers that deduplicate the at-least-once delivery.
	IDField string `toml:"id_field"`
}

// topics returns Topic and Topics together, without repeats.
func (c SourceConfig) topics() []string {
	var out []string
	if c.Topic != "" {
		out = append(out, c.Topic)
	}
	for _, t := range c.Topics {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Validate checks every key.
func (c SourceConfig) Validate() error {
	var errs []error
	if err := checkBrokers(c.Brokers); err != nil {
		errs = append(errs, err)
	}
	if c.Topic == "" && len(c.Topics) == 0 {
		errs = append(errs, etl.FieldErrorf("topic", "is missing; name the topic to read (or list several in topics)"))
	}
	for i, t := range c.Topics {
		if t == "" {
			errs = append(errs, etl.FieldErrorf("topics", "entry %d is empty", i))
		}
	}
	if c.Group == "" {
		errs = append(errs, etl.FieldErrorf("group", "is empty; name the consumer group"))
	}
	switch c.Start {
	case "", StartEarliest, StartLatest:
	default:
		errs = append(errs, etl.FieldErrorf("start", "%q is not %q or %q", c.Start, StartEarliest, StartLatest))
	}
	switch {
	case c.Block < 0:
		errs = append(errs, etl.FieldErrorf("block", "%s is negative", c.Block))
	case c.Block > 0 && time.Duration(c.Block) < time.Millisecond:
		errs = append(errs, etl.FieldErrorf("block", "%s is less than a millisecond; write a duration string such as \"5s\"", c.Block))
	}
	if c.KeyField != "" && c.KeyField == c.IDField {
		errs = append(errs, etl.FieldErrorf("id_field", "%q is also key_field; give them different names", c.IDField))
	}
	return errors.Join(errs...)
}

// SinkConfig configures the "kafka" sink.
type SinkConfig struct {
	// Brokers are the bootstrap brokers, "host:port" each.
	Brokers []string `toml:"brokers"`
	// Topic is the topic records are produced to.
	Topic string `toml:"topic"`
	// Key, when set, names the field whose value becomes each message's
	// key (a string as it is, anything else as JSON), so records with the
	// same key land in the same partition, in order. A record without the
	// field, or with null there, is rejected to the dead-letter queue.
	Key string `toml:"key"`
}

// Validate checks every key.
func (c SinkConfig) Validate() error {
	var errs []error
	if err := checkBrokers(c.Brokers); err != nil {
		errs = append(errs, err)
	}
	if c.Topic == "" {
		errs = append(errs, etl.FieldErrorf("topic", "is empty; name the topic to produce to"))
	}
	return errors.Join(errs...)
}

// checkBrokers wants at least one "host:port".
func checkBrokers(brokers []string) error {
	if len(brokers) == 0 {
		return etl.FieldErrorf("brokers", "is empty; list the bootstrap brokers, such as [\"127.0.0.1:9092\"]")
	}
	for i, b := range brokers {
		host, port, err := net.SplitHostPort(b)
		if err != nil || host == "" {
			return etl.FieldErrorf("brokers", "entry %d, %q, is not host:port", i, b)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return etl.FieldErrorf("brokers", "entry %d, %q: %s is not a port", i, b, port)
		}
	}
	return nil
}

// fail wraps a client error with what was being done and where.
func fail(kind, topics string, brokers []string, what string, err error) error {
	return fmt.Errorf("kafka: %s %s at %v: %s: %w", kind, topics, brokers, what, err)
}
