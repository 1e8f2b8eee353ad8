package distributed

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestResolveDefaults(t *testing.T) {
	s, err := resolve(Options{RedisURL: "redis://localhost:6379/0"}, optionNames)
	if err != nil {
		t.Fatal(err)
	}
	if s.LeaseTTL != 300*time.Second || s.HeartbeatInterval != 30*time.Second ||
		s.KeyPrefix != "agora:distributed:" || s.RedlockClockDriftFactor != 0.01 ||
		s.LeaseRenewalDeadline != 200*time.Second || s.FencingKeyTTL != 0 || s.FallbackToLocal {
		t.Fatalf("defaults = %+v", s.Options)
	}
	if s.renewEvery != 30*time.Second {
		t.Errorf("renewEvery = %s, want min(TTL/3, heartbeat) = 30s", s.renewEvery)
	}
	if s.onceTTL != 600*time.Second {
		t.Errorf("onceTTL = %s, want 2×TTL", s.onceTTL)
	}
	if s.Logger == nil || s.Clock == nil {
		t.Error("Logger or Clock left nil")
	}
	if err := (Options{RedisURL: "redis://localhost"}).Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestResolveDerivedTimings(t *testing.T) {
	tests := []struct {
		name                string
		opts                Options
		heartbeat, deadline time.Duration
		renewEvery          time.Duration
	}{
		{"short TTL shortens the default heartbeat", Options{LeaseTTL: 9 * time.Second}, 3 * time.Second, 6 * time.Second, 3 * time.Second},
		{"a short deadline speeds up renewal", Options{LeaseTTL: 60 * time.Second, LeaseRenewalDeadline: 4 * time.Second}, 20 * time.Second, 4 * time.Second, 2 * time.Second},
		{"heartbeat bounds renewal", Options{LeaseTTL: 60 * time.Second, HeartbeatInterval: 5 * time.Second}, 5 * time.Second, 40 * time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.RedisURL = "redis://localhost"
			s, err := resolve(tt.opts, optionNames)
			if err != nil {
				t.Fatal(err)
			}
			if s.HeartbeatInterval != tt.heartbeat || s.LeaseRenewalDeadline != tt.deadline || s.renewEvery != tt.renewEvery {
				t.Errorf("heartbeat=%s deadline=%s renewEvery=%s, want %s %s %s",
					s.HeartbeatInterval, s.LeaseRenewalDeadline, s.renewEvery, tt.heartbeat, tt.deadline, tt.renewEvery)
			}
			if s.LeaseRenewalDeadline >= s.LeaseTTL || 2*s.renewEvery > s.LeaseRenewalDeadline {
				t.Errorf("timings break the renewal invariant: %+v", s)
			}
		})
	}
}

func TestValidateErrors(t *testing.T) {
	const url = "redis://localhost:6379/0"
	three := []string{"redis://a:6379", "redis://b:6379", "redis://c:6379"}
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"missing URL", Options{}, []string{"RedisURL is empty"}},
		{"bad URL", Options{RedisURL: "http://x"}, []string{"RedisURL:", `scheme "http"`}},
		{"negative TTL", Options{RedisURL: url, LeaseTTL: -time.Second}, []string{"LeaseTTL (-1s) must not be negative"}},
		{"sub-millisecond TTL", Options{RedisURL: url, LeaseTTL: time.Microsecond}, []string{"LeaseTTL (1µs) must be at least 1ms"}},
		{"negative heartbeat", Options{RedisURL: url, HeartbeatInterval: -1}, []string{"HeartbeatInterval (-1ns) must not be negative"}},
		{"heartbeat = TTL", Options{RedisURL: url, LeaseTTL: 10 * time.Second, HeartbeatInterval: 10 * time.Second}, []string{"HeartbeatInterval (10s) must be shorter than LeaseTTL (10s)"}},
		{"heartbeat > default TTL", Options{RedisURL: url, HeartbeatInterval: time.Hour}, []string{"HeartbeatInterval (1h0m0s) must be shorter than LeaseTTL (5m0s)"}},
		{"deadline = TTL", Options{RedisURL: url, LeaseTTL: 10 * time.Second, LeaseRenewalDeadline: 10 * time.Second}, []string{"LeaseRenewalDeadline (10s) must be shorter than LeaseTTL (10s)"}},
		{"deadline > TTL", Options{RedisURL: url, LeaseRenewalDeadline: 301 * time.Second}, []string{"LeaseRenewalDeadline (5m1s) must be shorter than LeaseTTL (5m0s)"}},
		{"negative deadline", Options{RedisURL: url, LeaseRenewalDeadline: -time.Second}, []string{"LeaseRenewalDeadline (-1s) must not be negative"}},
		{"negative fencing TTL", Options{RedisURL: url, FencingKeyTTL: -time.Second}, []string{"FencingKeyTTL (-1s) must not be negative"}},
		{"fencing TTL below lease TTL", Options{RedisURL: url, FencingKeyTTL: time.Minute}, []string{"FencingKeyTTL (1m0s) must be 0 (keep) or at least LeaseTTL (5m0s)"}},
		{"braces in prefix", Options{RedisURL: url, KeyPrefix: "app{x}:"}, []string{`KeyPrefix "app{x}:" must not contain { or }`}},
		{"negative drift", Options{RedisURL: url, RedlockClockDriftFactor: -0.1}, []string{"RedlockClockDriftFactor (-0.1) must be at least 0 and below 1"}},
		{"drift of 1", Options{RedisURL: url, RedlockClockDriftFactor: 1}, []string{"RedlockClockDriftFactor (1) must be at least 0 and below 1"}},
		{"NaN drift", Options{RedisURL: url, RedlockClockDriftFactor: math.NaN()}, []string{"RedlockClockDriftFactor (NaN)"}},
		{"one Redlock URL", Options{RedisURL: url, RedlockRedisURLs: three[:1]}, []string{"RedlockRedisURLs names 1 server(s); quorum mode needs at least 3"}},
		{"two Redlock URLs", Options{RedisURL: url, RedlockRedisURLs: three[:2]}, []string{"RedlockRedisURLs names 2 server(s)"}},
		{"duplicate Redlock URL", Options{RedisURL: url, RedlockRedisURLs: []string{"redis://a:6379", "redis://b:6379", "redis://A:6379/3"}},
			[]string{"RedlockRedisURLs[2] (redis://A:6379/3) is the same server as RedlockRedisURLs[0]"}},
		{"bad Redlock URL", Options{RedisURL: url, RedlockRedisURLs: []string{"redis://a", "redis://b", "redis://u:topsecret@c:x"}},
			[]string{"RedlockRedisURLs[2]:", "not a valid URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if err == nil {
				t.Fatal("Validate succeeded")
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "topsecret") {
				t.Errorf("error shows a password: %q", err)
			}
			if _, err := NewRedisWorkerCoordinator(tt.opts); err == nil {
				t.Error("NewRedisWorkerCoordinator accepted the same options")
			}
		})
	}
}

func TestValidateReportsEveryProblemOnItsOwnLine(t *testing.T) {
	err := Options{
		RedisURL:                "ftp://x",
		LeaseTTL:                -1,
		HeartbeatInterval:       -1,
		KeyPrefix:               "{",
		RedlockRedisURLs:        []string{"redis://a"},
		RedlockClockDriftFactor: 2,
	}.Validate()
	if err == nil {
		t.Fatal("Validate succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 6 {
		t.Fatalf("got %d problems, want 6:\n%s", len(lines), err)
	}
	for _, line := range lines {
		if !strings.HasPrefix(line, "distributed: invalid configuration: ") {
			t.Errorf("line %q lacks the package prefix", line)
		}
	}
}
