package distributed

// Config holds the AGORA_DISTRIBUTED_* settings.
type Config struct {
	RedisURL string
}

// LoadConfig reads and validates the AGORA_DISTRIBUTED_* environment.
func LoadConfig() (Config, error) { return Config{}, nil }

// Options converts the settings into coordinator Options.
func (c Config) Options() Options { return Options{RedisURL: c.RedisURL} }
