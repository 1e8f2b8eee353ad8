package distributed

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/agora-etl/agora/internal/errsplit"
	"github.com/agora-etl/agora/internal/redact"
	"github.com/agora-etl/agora/internal/typo"
	"github.com/agora-etl/agora/runtime/history"
)

// EnvPrefix starts the name of every environment variable LoadConfig reads.
const EnvPrefix = "AGORA_DISTRIBUTED"

// Config holds the AGORA_DISTRIBUTED_* settings. LoadConfig fills it from the
// environment, with the defaults in force for what is not set (LeaseTTL
// 300 s, HeartbeatInterval 30 s, KeyPrefix "agora:distributed:", renewal
// deadline ⅔ of the TTL, clock drift 0.01); Options turns it into
// coordinator Options. In a Config built by hand, zero values mean the
// defaults documented on Options. An empty RedisURL means the worker runs
// without Redis (one replica, in-process leases).
type Config struct {
	// RedisURL is AGORA_DISTRIBUTED_REDIS_URL.
	RedisURL string `envconfig:"REDIS_URL"`
	// LeaseTTL is AGORA_DISTRIBUTED_LEASE_TTL_SECONDS.
	LeaseTTL Seconds `envconfig:"LEASE_TTL_SECONDS"`
	// HeartbeatInterval is AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL, in seconds.
	HeartbeatInterval Seconds `envconfig:"HEARTBEAT_INTERVAL"`
	// KeyPrefix is AGORA_DISTRIBUTED_KEY_PREFIX.
	KeyPrefix string `envconfig:"KEY_PREFIX"`
	// FallbackToLocal is AGORA_DISTRIBUTED_FALLBACK_TO_LOCAL.
	FallbackToLocal bool `envconfig:"FALLBACK_TO_LOCAL"`
	// FencingKeyTTL is AGORA_DISTRIBUTED_FENCING_KEY_TTL_SECONDS.
	FencingKeyTTL Seconds `envconfig:"FENCING_KEY_TTL_SECONDS"`
	// LeaseRenewalDeadline is AGORA_DISTRIBUTED_LEASE_RENEWAL_DEADLINE_SECONDS.
	LeaseRenewalDeadline Seconds `envconfig:"LEASE_RENEWAL_DEADLINE_SECONDS"`
	// RedlockRedisURLs is AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS: a JSON array
	// of URLs or a comma-separated list.
	RedlockRedisURLs URLList `envconfig:"REDLOCK_REDIS_URLS"`
	// RedlockClockDriftFactor is AGORA_DISTRIBUTED_REDLOCK_CLOCK_DRIFT_FACTOR.
	RedlockClockDriftFactor float64 `envconfig:"REDLOCK_CLOCK_DRIFT_FACTOR"`
	// RunHistory is AGORA_DISTRIBUTED_RUN_HISTORY: "RUNS[,MAX_AGE]" such as
	// "100,168h" (the default), or "off".
	RunHistory RunHistorySetting `envconfig:"RUN_HISTORY"`
}

// envNames names the settings by their environment variables.
var envNames = settingNames{
	RedisURL:                EnvPrefix + "_REDIS_URL",
	LeaseTTL:                EnvPrefix + "_LEASE_TTL_SECONDS",
	HeartbeatInterval:       EnvPrefix + "_HEARTBEAT_INTERVAL",
	KeyPrefix:               EnvPrefix + "_KEY_PREFIX",
	FencingKeyTTL:           EnvPrefix + "_FENCING_KEY_TTL_SECONDS",
	LeaseRenewalDeadline:    EnvPrefix + "_LEASE_RENEWAL_DEADLINE_SECONDS",
	RedlockRedisURLs:        EnvPrefix + "_REDLOCK_REDIS_URLS",
	RedlockClockDriftFactor: EnvPrefix + "_REDLOCK_CLOCK_DRIFT_FACTOR",
}

// LoadConfig reads and validates the AGORA_DISTRIBUTED_* environment. It
// reports every problem at once, one error per problem, each naming its
// variable; values of URL variables are never echoed, so no password leaks.
// An unknown AGORA_DISTRIBUTED_* variable is an error too, since a misspelt
// setting would otherwise fall back to its default unnoticed.
func LoadConfig() (Config, error) {
	var cfg Config
	var errs []error
	var unreadable []string // variables whose values did not parse
	errs = append(errs, unknownVariables()...)

	// envconfig stops at the first bad value; running it once per field
	// reports them all.
	v := reflect.ValueOf(&cfg).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		field := t.Field(i)
		one := reflect.New(reflect.StructOf([]reflect.StructField{{
			Name: field.Name, Type: field.Type, Tag: field.Tag,
		}}))
		if err := envconfig.Process(EnvPrefix, one.Interface()); err != nil {
			errs = append(errs, describeParseError(err))
			var pe *envconfig.ParseError
			if errors.As(err, &pe) {
				unreadable = append(unreadable, pe.KeyName)
			}
			continue
		}
		v.Field(i).Set(one.Elem().Field(0))
	}
	// The settings that were read are checked too, so one run reports
	// every problem; what is said about a variable that could not be read
	// (checked at its default) would only mislead.
	if err := cfg.Validate(); err != nil {
		for _, e := range errsplit.Split(err) {
			if !mentionsAny(e.Error(), unreadable) {
				errs = append(errs, e)
			}
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg.withDefaults(), nil
}

// withDefaults fills the unset settings of a valid c with the values in
// force, so that printing, logging or serving the Config (or its Options)
// shows them rather than zeros. It uses the same rules as the coordinator,
// which therefore builds the same thing from either.
func (c Config) withDefaults() Config {
	s, err := check(c.Options(), envNames, false)
	if err != nil {
		return c
	}
	c.LeaseTTL = Seconds(s.LeaseTTL)
	c.HeartbeatInterval = Seconds(s.HeartbeatInterval)
	c.KeyPrefix = s.KeyPrefix
	c.LeaseRenewalDeadline = Seconds(s.LeaseRenewalDeadline)
	c.RedlockClockDriftFactor = s.RedlockClockDriftFactor
	return c
}

// mentionsAny reports whether text names any of the variables.
func mentionsAny(text string, variables []string) bool {
	for _, name := range variables {
		if strings.Contains(text, name) {
			return true
		}
	}
	return false
}

// Validate checks the settings, naming each problem by its environment
// variable. An empty RedisURL is valid.
func (c Config) Validate() error {
	_, err := check(c.Options(), envNames, false)
	return err
}

// Options converts the settings into coordinator Options.
func (c Config) Options() Options {
	return Options{
		RedisURL:                c.RedisURL,
		LeaseTTL:                c.LeaseTTL.Duration(),
		HeartbeatInterval:       c.HeartbeatInterval.Duration(),
		KeyPrefix:               c.KeyPrefix,
		FallbackToLocal:         c.FallbackToLocal,
		FencingKeyTTL:           c.FencingKeyTTL.Duration(),
		LeaseRenewalDeadline:    c.LeaseRenewalDeadline.Duration(),
		RedlockRedisURLs:        append([]string(nil), c.RedlockRedisURLs...),
		RedlockClockDriftFactor: c.RedlockClockDriftFactor,
		RunHistory:              c.RunHistory.Policy,
	}
}

// String describes the settings with passwords redacted, for logs.
func (c Config) String() string {
	urls := make([]string, len(c.RedlockRedisURLs))
	for i, u := range c.RedlockRedisURLs {
		urls[i] = redact.URL(u)
	}
	return fmt.Sprintf("redis_url=%s lease_ttl=%s heartbeat_interval=%s key_prefix=%q fallback_to_local=%t fencing_key_ttl=%s lease_renewal_deadline=%s redlock_redis_urls=%v redlock_clock_drift_factor=%v run_history=%s",
		redact.URL(c.RedisURL), c.LeaseTTL, c.HeartbeatInterval, c.KeyPrefix, c.FallbackToLocal,
		c.FencingKeyTTL, c.LeaseRenewalDeadline, urls, c.RedlockClockDriftFactor, c.RunHistory.Policy)
}

// knownVariables returns the full names of the variables Config reads.
func knownVariables() map[string]bool {
	known := map[string]bool{}
	t := reflect.TypeOf(Config{})
	for i := 0; i < t.NumField(); i++ {
		known[EnvPrefix+"_"+t.Field(i).Tag.Get("envconfig")] = true
	}
	return known
}

func unknownVariables() []error {
	known := knownVariables()
	var unknown []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix+"_") && !known[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	errs := make([]error, 0, len(unknown))
	for _, name := range unknown {
		msg := fmt.Sprintf("%s is not a known setting", name)
		if guess := closestVariable(name, known); guess != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", guess)
		}
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidConfig, msg))
	}
	return errs
}

// closestVariable suggests the known variable nearest to name, when it is a
// likely typo (typo.ClosestName: a few characters apart, or one name
// extending the other, LEASE_TTL for LEASE_TTL_SECONDS).
func closestVariable(name string, known map[string]bool) string {
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	return typo.ClosestName(name, names)
}

// describeParseError turns an envconfig error into one naming the variable,
// without echoing values that could hold a password.
func describeParseError(err error) error {
	var pe *envconfig.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	cause := pe.Err
	var ne *strconv.NumError
	if errors.As(cause, &ne) {
		cause = ne.Err
	}
	switch pe.FieldName {
	case "RedlockRedisURLs", "RedisURL":
		return fmt.Errorf("%w: %s: %v", ErrInvalidConfig, pe.KeyName, cause)
	case "FallbackToLocal":
		return fmt.Errorf("%w: %s=%q is not a boolean; use true or false", ErrInvalidConfig, pe.KeyName, pe.Value)
	case "RedlockClockDriftFactor":
		return fmt.Errorf("%w: %s=%q is not a number such as 0.01", ErrInvalidConfig, pe.KeyName, pe.Value)
	}
	if errors.Is(cause, errNotSeconds) {
		ex := secondsExamples[pe.FieldName]
		if ex[0] == "" {
			ex = [2]string{"60", "1m"}
		}
		return fmt.Errorf("%w: %s=%q is not a number of seconds (%s) or a duration (%s)", ErrInvalidConfig, pe.KeyName, pe.Value, ex[0], ex[1])
	}
	return fmt.Errorf("%w: %s=%q: %v", ErrInvalidConfig, pe.KeyName, pe.Value, cause)
}

// errNotSeconds is Seconds.Decode's error for text that is neither a number
// nor a duration; describeParseError adds an example fit for the variable.
var errNotSeconds = errors.New("is not a number of seconds or a duration")

// secondsExamples are the examples an unreadable duration variable's error
// shows, in both spellings: the variable's default where it has one (the
// heartbeat's is not the TTL's), a plausible value otherwise.
var secondsExamples = map[string][2]string{
	"LeaseTTL":             {"300", "5m"},
	"HeartbeatInterval":    {"30", "30s"},
	"FencingKeyTTL":        {"86400", "24h"},
	"LeaseRenewalDeadline": {"200", "3m20s"},
}

// Seconds is a duration read from the environment either as a number of
// seconds ("300", "0.5") or as a Go duration ("5m", "1m30s").
type Seconds time.Duration

// Decode parses v for envconfig.
func (s *Seconds) Decode(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		*s = 0
		return nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= math.MaxInt64/float64(time.Second):
			return errors.New("is not a usable number of seconds")
		case f < 0 && time.Duration(f*float64(time.Second)) == 0:
			// Too small to survive as a duration: it would become 0, the
			// default, and its sign would go unnoticed.
			return errors.New("must not be negative")
		}
		*s = Seconds(time.Duration(f * float64(time.Second)))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return errNotSeconds
	}
	*s = Seconds(d)
	return nil
}

// Duration returns s as a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(s) }

// String formats s as a Go duration.
func (s Seconds) String() string { return time.Duration(s).String() }

// URLList is a list of Redis URLs read from the environment either as a JSON
// array (["redis://r1:6379","redis://r2:6379"]) or comma-separated
// (redis://r1:6379,redis://r2:6379).
type URLList []string

// Decode parses v for envconfig. Its errors never quote the URLs.
func (l *URLList) Decode(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		*l = nil
		return nil
	}
	var items []string
	if strings.HasPrefix(v, "[") {
		if err := json.Unmarshal([]byte(v), &items); err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				return fmt.Errorf("not a valid JSON array of strings (syntax error at byte %d)", syn.Offset)
			}
			return errors.New("not a valid JSON array of strings")
		}
	} else {
		items = strings.Split(v, ",")
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return fmt.Errorf("entry %d is empty", i)
		}
		out = append(out, item)
	}
	if !strings.HasPrefix(v, "[") && commaInPassword(out) {
		// Echoing the pieces, even redacted, would show the password's
		// halves: neither looks like a URL with a password.
		return errors.New("an entry of the comma-separated list is not a whole URL, so a password probably contains ','; write the list as a JSON array")
	}
	*l = out
	return nil
}

// commaInPassword reports whether splitting at commas cut a URL inside its
// password: the piece after the cut then has no scheme but the '@' that
// ends the password. (A piece with neither is only a URL without a scheme,
// which the settings check reports as such.)
func commaInPassword(pieces []string) bool {
	for _, p := range pieces {
		if scheme, _, ok := strings.Cut(p, "://"); (!ok || scheme == "") && strings.Contains(p, "@") {
			return true
		}
	}
	return false
}

// String lists the URLs with passwords redacted.
func (l URLList) String() string {
	shown := make([]string, len(l))
	for i, u := range l {
		shown[i] = redact.URL(u)
	}
	return strings.Join(shown, ",")
}

// RunHistorySetting is the run history bound read from the environment:
// "RUNS[,MAX_AGE]" ("100,168h", "500"), or "off" (see
// history.Parse). Set tells a value read from one left unset.
type RunHistorySetting struct {
	history.Policy
	// Set is true when the variable was given.
	Set bool
}

// Decode parses v for envconfig.
func (h *RunHistorySetting) Decode(v string) error {
	if strings.TrimSpace(v) == "" {
		*h = RunHistorySetting{}
		return nil
	}
	p, err := history.Parse(v)
	if err != nil {
		return errors.New("is not RUNS[,MAX_AGE] such as 100,168h, or off")
	}
	*h = RunHistorySetting{Policy: p, Set: true}
	return nil
}
