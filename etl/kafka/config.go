package kafka

import (
	"errors"
	"net"
	"strconv"

	"github.com/agora-etl/agora/etl"
)

// The start values of the source.
const (
	// StartEarliest makes a new group read each partition from its
	// beginning (the default).
	StartEarliest = "earliest"
	// StartLatest makes a new group read only records produced after it
	// joined.
	StartLatest = "latest"
)

// SourceConfig configures the "kafka" source.
type SourceConfig struct {
	// Brokers are seed brokers, host:port.
	Brokers []string `toml:"brokers"`
	// Topic is the topic to consume; or use Topics.
	Topic string `toml:"topic"`
	// Topics are several topics to consume.
	Topics []string `toml:"topics"`
	// Group is the consumer group; its committed offsets say what was read.
	Group string `toml:"group"`
	// Start is where a group without committed offsets starts: "earliest"
	// (the default) or "latest".
	Start string `toml:"start"`
	// Block is how long a read waits for records (default 5s); a read that
	// gets none ends the run, and a continuous schedule starts the next.
	Block etl.Duration `toml:"block"`
	// KeyField, when set, adds each record's Kafka key to it under this
	// field.
	KeyField string `toml:"key_field"`
}

// topics returns Topic and Topics together.
func (c SourceConfig) topics() []string {
	var out []string
	if c.Topic != "" {
		out = append(out, c.Topic)
	}
	return append(out, c.Topics...)
}

// Validate checks every key.
func (c SourceConfig) Validate() error {
	errs := checkBrokers(c.Brokers)
	switch {
	case c.Topic == "" && len(c.Topics) == 0:
		errs = append(errs, etl.FieldErrorf("topic", "is missing: name the topic to consume (or several with topics = [...])"))
	case c.Topic != "" && len(c.Topics) > 0:
		errs = append(errs, etl.FieldErrorf("topics", "set topic or topics, not both"))
	}
	for i, t := range c.Topics {
		if t == "" {
			errs = append(errs, etl.FieldErrorf("topics", "element %d is empty", i))
		}
	}
	if c.Group == "" {
		errs = append(errs, etl.FieldErrorf("group", "is empty; name the consumer group"))
	}
	switch c.Start {
	case "", StartEarliest, StartLatest:
	default:
		errs = append(errs, etl.FieldErrorf("start", "%q is not a start; use %q or %q", c.Start, StartEarliest, StartLatest))
	}
	if c.Block < 0 {
		errs = append(errs, etl.FieldErrorf("block", "must not be negative"))
	}
	return errors.Join(errs...)
}

// SinkConfig configures the "kafka" sink.
type SinkConfig struct {
	// Brokers are seed brokers, host:port.
	Brokers []string `toml:"brokers"`
	// Topic is the topic records are produced to.
	Topic string `toml:"topic"`
	// Key, when set, names the field whose value becomes the message key
	// (a string as it is, anything else as JSON), so records with one key
	// keep their order in one partition. A record without the field gets
	// no key.
	Key string `toml:"key"`
}

// Validate checks every key.
func (c SinkConfig) Validate() error {
	errs := checkBrokers(c.Brokers)
	if c.Topic == "" {
		errs = append(errs, etl.FieldErrorf("topic", "is empty; name the topic to produce to"))
	}
	return errors.Join(errs...)
}

func checkBrokers(brokers []string) []error {
	if len(brokers) == 0 {
		return []error{etl.FieldErrorf("brokers", "is missing: list seed brokers, such as [\"127.0.0.1:9092\"]")}
	}
	var errs []error
	for i, b := range brokers {
		host, port, err := net.SplitHostPort(b)
		if err == nil {
			if n, perr := strconv.Atoi(port); perr != nil || n < 1 || n > 65535 {
				err = errors.New("bad port")
			}
		}
		if err != nil || host == "" {
			errs = append(errs, etl.FieldErrorf("brokers", "element %d, %q, is not host:port", i, b))
		}
	}
	return errs
}
