package distributed

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/errsplit"
)

// clearEnv removes every AGORA_DISTRIBUTED_* variable for the test.
func clearEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix+"_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
}

func setEnv(t *testing.T, vars map[string]string) {
	clearEnv(t)
	for k, v := range vars {
		t.Setenv(k, v)
	}
}

func TestLoadConfigEmptyMeansNoRedis(t *testing.T) {
	clearEnv(t)
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RedisURL != "" {
		t.Fatalf("RedisURL = %q", cfg.RedisURL)
	}
	o := cfg.Options()
	if o.RedisURL != "" || o.RedlockRedisURLs != nil || o.FallbackToLocal || o.FencingKeyTTL != 0 {
		t.Fatalf("Options = %+v", o)
	}
}

// TestLoadConfigShowsTheDefaultsInForce keeps what a worker prints or
// serves about its settings equal to what it uses.
func TestLoadConfigShowsTheDefaultsInForce(t *testing.T) {
	clearEnv(t)
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Options()
	if o.LeaseTTL != 300*time.Second || o.HeartbeatInterval != 30*time.Second || o.KeyPrefix != "agora:distributed:" ||
		o.RedlockClockDriftFactor != 0.01 || o.LeaseRenewalDeadline != 200*time.Second {
		t.Fatalf("Options = %+v, want the documented defaults", o)
	}
	for _, want := range []string{"lease_ttl=5m0s", "heartbeat_interval=30s", `key_prefix="agora:distributed:"`, "redlock_clock_drift_factor=0.01"} {
		if !strings.Contains(cfg.String(), want) {
			t.Errorf("String() = %s, lacks %s", cfg, want)
		}
	}
	// A short TTL brings the heartbeat and the deadline down with it, as the
	// coordinator would.
	setEnv(t, map[string]string{"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS": "30"})
	cfg, err = LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if o := cfg.Options(); o.LeaseTTL != 30*time.Second || o.HeartbeatInterval != 10*time.Second || o.LeaseRenewalDeadline != 20*time.Second {
		t.Fatalf("Options = %+v, want TTL 30s, heartbeat 10s, deadline 20s", o)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a loaded Config does not validate: %v", err)
	}
}

func TestLoadConfigReadsEveryVariable(t *testing.T) {
	setEnv(t, map[string]string{
		"AGORA_DISTRIBUTED_REDIS_URL":                      "redis://:pw@primary:6379/2",
		"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS":              "120",
		"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL":             "15",
		"AGORA_DISTRIBUTED_KEY_PREFIX":                     "shop:",
		"AGORA_DISTRIBUTED_FALLBACK_TO_LOCAL":              "true",
		"AGORA_DISTRIBUTED_FENCING_KEY_TTL_SECONDS":        "86400",
		"AGORA_DISTRIBUTED_LEASE_RENEWAL_DEADLINE_SECONDS": "1m30s",
		"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS":             `["redis://r1:6379","redis://r2:6379","redis://r3:6379"]`,
		"AGORA_DISTRIBUTED_REDLOCK_CLOCK_DRIFT_FACTOR":     "0.02",
	})
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Options()
	want := Options{
		RedisURL:                "redis://:pw@primary:6379/2",
		LeaseTTL:                120 * time.Second,
		HeartbeatInterval:       15 * time.Second,
		KeyPrefix:               "shop:",
		FallbackToLocal:         true,
		FencingKeyTTL:           24 * time.Hour,
		LeaseRenewalDeadline:    90 * time.Second,
		RedlockRedisURLs:        []string{"redis://r1:6379", "redis://r2:6379", "redis://r3:6379"},
		RedlockClockDriftFactor: 0.02,
	}
	if o.RedisURL != want.RedisURL || o.LeaseTTL != want.LeaseTTL || o.HeartbeatInterval != want.HeartbeatInterval ||
		o.KeyPrefix != want.KeyPrefix || o.FallbackToLocal != want.FallbackToLocal || o.FencingKeyTTL != want.FencingKeyTTL ||
		o.LeaseRenewalDeadline != want.LeaseRenewalDeadline || o.RedlockClockDriftFactor != want.RedlockClockDriftFactor ||
		strings.Join(o.RedlockRedisURLs, " ") != strings.Join(want.RedlockRedisURLs, " ") {
		t.Fatalf("Options = %+v\nwant      %+v", o, want)
	}
	if s := cfg.String(); strings.Contains(s, ":pw@") || !strings.Contains(s, "redis://:xxxxx@primary:6379/2") {
		t.Errorf("String() = %q: password shown or URL missing", s)
	}
}

func TestLoadConfigRedlockCommaList(t *testing.T) {
	setEnv(t, map[string]string{
		"AGORA_DISTRIBUTED_REDIS_URL":          "redis://primary",
		"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS": " redis://r1:6379 , redis://r2:6379,redis://r3:6379 ",
	})
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.RedlockRedisURLs, "|"); got != "redis://r1:6379|redis://r2:6379|redis://r3:6379" {
		t.Fatalf("RedlockRedisURLs = %q", got)
	}
}

func TestLoadConfigErrorsNameTheVariable(t *testing.T) {
	const secret = "hunter2hunter2"
	base := "redis://localhost:6379"
	tests := []struct {
		name string
		vars map[string]string
		want []string
	}{
		{"bad URL", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": "redis://u:" + secret + "@h:port"},
			[]string{"AGORA_DISTRIBUTED_REDIS_URL:", "not a valid URL"}},
		{"URL without scheme", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": ":" + secret + "@h:6379"},
			[]string{"AGORA_DISTRIBUTED_REDIS_URL:", "has no scheme", ":xxxxx@h:6379"}},
		{"TTL not a number", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_LEASE_TTL_SECONDS": "five"},
			[]string{`AGORA_DISTRIBUTED_LEASE_TTL_SECONDS="five" is not a number of seconds (300) or a duration (5m)`}},
		{"heartbeat not a number", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL": "often"},
			[]string{`AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL="often" is not a number of seconds (30) or a duration (30s)`}},
		{"negative TTL", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_LEASE_TTL_SECONDS": "-5"},
			[]string{"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS (-5s) must not be negative"}},
		{"heartbeat >= TTL", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_LEASE_TTL_SECONDS": "20", "AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL": "20"},
			[]string{"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL (20s) must be shorter than AGORA_DISTRIBUTED_LEASE_TTL_SECONDS (20s)"}},
		{"deadline >= TTL", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_LEASE_RENEWAL_DEADLINE_SECONDS": "300"},
			[]string{"AGORA_DISTRIBUTED_LEASE_RENEWAL_DEADLINE_SECONDS (5m0s) must be shorter than AGORA_DISTRIBUTED_LEASE_TTL_SECONDS (5m0s)"}},
		{"negative deadline", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_LEASE_RENEWAL_DEADLINE_SECONDS": "-1"},
			[]string{"AGORA_DISTRIBUTED_LEASE_RENEWAL_DEADLINE_SECONDS (-1s) must not be negative"}},
		{"negative fencing TTL", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_FENCING_KEY_TTL_SECONDS": "-3"},
			[]string{"AGORA_DISTRIBUTED_FENCING_KEY_TTL_SECONDS (-3s) must not be negative"}},
		{"bad boolean", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_FALLBACK_TO_LOCAL": "yes please"},
			[]string{`AGORA_DISTRIBUTED_FALLBACK_TO_LOCAL="yes please" is not a boolean`}},
		{"bad drift", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_REDLOCK_CLOCK_DRIFT_FACTOR": "lots"},
			[]string{`AGORA_DISTRIBUTED_REDLOCK_CLOCK_DRIFT_FACTOR="lots" is not a number`}},
		{"negative drift", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_REDLOCK_CLOCK_DRIFT_FACTOR": "-0.5"},
			[]string{"AGORA_DISTRIBUTED_REDLOCK_CLOCK_DRIFT_FACTOR (-0.5) must be at least 0"}},
		{"two Redlock URLs", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS": "redis://a,redis://b"},
			[]string{"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS names 2 server(s)"}},
		{"duplicate Redlock URLs", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS": `["redis://a","redis://b","redis://:` + secret + `@b:6379"]`},
			[]string{"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS[2] (redis://:xxxxx@b:6379) is the same server as AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS[1]"}},
		{"bad Redlock JSON", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS": `["redis://:` + secret + `@a",`},
			[]string{"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS: not a valid JSON array of strings"}},
		{"empty Redlock entry", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS": "redis://a,,redis://b"},
			[]string{"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS: entry 1 is empty"}},
		{"unparsable Redlock URL", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS": "redis://a,redis://b,mysql://u:" + secret + "@c"},
			[]string{"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS[2]:", `scheme "mysql"`}},
		{"comma in a Redlock password", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS": "redis://:ab," + secret + "@r1:6379,redis://r2,redis://r3"},
			[]string{"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS: an entry of the comma-separated list is not a whole URL", "write the list as a JSON array"}},
		{"Redlock URL without scheme", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS": "redis://a,localhost:6379,redis://c"},
			[]string{"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS[1]:", "has no scheme"}},
		{"Redlock without primary", map[string]string{"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS": "redis://a,redis://b,redis://c"},
			[]string{"AGORA_DISTRIBUTED_REDLOCK_REDIS_URLS is set but AGORA_DISTRIBUTED_REDIS_URL is empty"}},
		{"braces in prefix", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_KEY_PREFIX": "a{b}"},
			[]string{`AGORA_DISTRIBUTED_KEY_PREFIX "a{b}" must not contain { or }`}},
		{"misspelt variable", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_LEASE_TTL": "30"},
			[]string{"AGORA_DISTRIBUTED_LEASE_TTL is not a known setting (did you mean AGORA_DISTRIBUTED_LEASE_TTL_SECONDS?)"}},
		{"unknown variable", map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": base, "AGORA_DISTRIBUTED_COLOUR": "blue"},
			[]string{"AGORA_DISTRIBUTED_COLOUR is not a known setting"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.vars)
			cfg, err := LoadConfig()
			if err == nil {
				t.Fatalf("LoadConfig succeeded: %+v", cfg)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error does not wrap ErrInvalidConfig: %v", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error shows a password: %q", err)
			}
		})
	}
}

func TestLoadConfigReportsAllBadValuesAtOnce(t *testing.T) {
	setEnv(t, map[string]string{
		"AGORA_DISTRIBUTED_REDIS_URL":               "redis://localhost",
		"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS":       "x",
		"AGORA_DISTRIBUTED_FALLBACK_TO_LOCAL":       "maybe",
		"AGORA_DISTRIBUTED_FENCING_KEY_TTL_SECONDS": "y",
	})
	_, err := LoadConfig()
	if err == nil {
		t.Fatal("LoadConfig succeeded")
	}
	for _, name := range []string{"LEASE_TTL_SECONDS", "FALLBACK_TO_LOCAL", "FENCING_KEY_TTL_SECONDS"} {
		if !strings.Contains(err.Error(), "AGORA_DISTRIBUTED_"+name) {
			t.Errorf("error does not mention %s: %v", name, err)
		}
	}
}

// TestLoadConfigReportsUnreadableAndInvalidValuesTogether mixes values that
// do not parse with values that parse but are invalid: one run reports
// both kinds, and says nothing misleading about the unreadable ones.
func TestLoadConfigReportsUnreadableAndInvalidValuesTogether(t *testing.T) {
	setEnv(t, map[string]string{
		"AGORA_DISTRIBUTED_REDIS_URL":                  "redis://localhost",
		"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL":         "x",
		"AGORA_DISTRIBUTED_FALLBACK_TO_LOCAL":          "yes",
		"AGORA_DISTRIBUTED_KEY_PREFIX":                 "{x}",
		"AGORA_DISTRIBUTED_REDLOCK_CLOCK_DRIFT_FACTOR": "NaN",
	})
	_, err := LoadConfig()
	if err == nil {
		t.Fatal("LoadConfig succeeded")
	}
	for _, want := range []string{
		`AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL="x"`,
		`AGORA_DISTRIBUTED_FALLBACK_TO_LOCAL="yes"`,
		`AGORA_DISTRIBUTED_KEY_PREFIX "{x}" must not contain { or }`,
		"AGORA_DISTRIBUTED_REDLOCK_CLOCK_DRIFT_FACTOR (NaN) must be at least 0",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %s:\n%v", want, err)
		}
	}
	if n := len(errsplit.Split(err)); n != 4 {
		t.Errorf("%d errors, want 4:\n%v", n, err)
	}
}

func TestLoadConfigRejectsAHugeLeaseTTL(t *testing.T) {
	setEnv(t, map[string]string{
		"AGORA_DISTRIBUTED_REDIS_URL":         "redis://localhost",
		"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS": "5000000000",
	})
	if _, err := LoadConfig(); err == nil || !strings.Contains(err.Error(), "AGORA_DISTRIBUTED_LEASE_TTL_SECONDS (1388888h53m20s) must be at most 168h0m0s") {
		t.Fatalf("LoadConfig = %v; want the TTL refused as too long", err)
	}
}

func TestLoadConfigFeedsTheCoordinator(t *testing.T) {
	setEnv(t, map[string]string{
		"AGORA_DISTRIBUTED_REDIS_URL":         "redis://localhost:6379/0",
		"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS": "0.5",
	})
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewRedisWorkerCoordinator(cfg.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.s.LeaseTTL != 500*time.Millisecond {
		t.Fatalf("LeaseTTL = %s", c.s.LeaseTTL)
	}
}

func TestSecondsDecode(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"300": 300 * time.Second, "0.25": 250 * time.Millisecond, "5m": 5 * time.Minute,
		"1m30s": 90 * time.Second, " 7 ": 7 * time.Second, "": 0, "-2": -2 * time.Second,
	} {
		var s Seconds
		if err := s.Decode(in); err != nil || s.Duration() != want {
			t.Errorf("Decode(%q) = %s, %v; want %s", in, s, err, want)
		}
	}
	// The largest float of seconds below the int64 limit rounds up to it;
	// a negative number too small to be a duration would read as 0.
	for _, in := range []string{"abc", "NaN", "Inf", "1e300", "5 minutes", "9223372036.854775807", "-1e-12"} {
		var s Seconds
		if err := s.Decode(in); err == nil {
			t.Errorf("Decode(%q) accepted: %s", in, s)
		}
	}
}

func TestURLListDecodeAndString(t *testing.T) {
	var l URLList
	if err := l.Decode(`["redis://:pw@a:1", "redis://b:2"]`); err != nil {
		t.Fatal(err)
	}
	if len(l) != 2 || l[0] != "redis://:pw@a:1" {
		t.Fatalf("decoded %q", l)
	}
	if got := l.String(); got != "redis://:xxxxx@a:1,redis://b:2" {
		t.Errorf("String() = %q", got)
	}
	if err := l.Decode(`[1, 2]`); err == nil {
		t.Error("accepted a JSON array of numbers")
	}
	if err := l.Decode(""); err != nil || l != nil {
		t.Errorf("empty decode = %v, %v", l, err)
	}
}
