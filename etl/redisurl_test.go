package etl

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://:s3cret@127.0.0.1:6379", "redis://:xxxxx@127.0.0.1:6379"},
		{"redis://user:p@ss:w@host:6379", "redis://user:xxxxx@host:6379"},
		{"rediss://alice:pw@host/2", "rediss://alice:xxxxx@host/2"},
		{"redis://token@host", "redis://xxxxx@host"},
		{"not a url", "not a url"},
	} {
		if got := redactURL(tc.in); got != tc.want {
			t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseRedisURLErrorsHideThePassword(t *testing.T) {
	for _, raw := range []string{
		"redis://:hunter2@127.0.0.1:6379/notadb",
		"http://:hunter2@127.0.0.1:6379",
	} {
		_, err := parseRedisURL(raw)
		if err == nil {
			t.Fatalf("parseRedisURL(%q) succeeded", raw)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error for %q shows the password: %v", raw, err)
		}
		if !strings.Contains(err.Error(), "xxxxx") {
			t.Errorf("error for %q does not show the redacted URL: %v", raw, err)
		}
	}
	if _, err := parseRedisURL(""); err == nil {
		t.Fatal("empty URL accepted")
	}
	opts, err := parseRedisURL("redis://:pw@127.0.0.1:6390/3")
	if err != nil || opts.Addr != "127.0.0.1:6390" || opts.DB != 3 || opts.Password != "pw" {
		t.Fatalf("parse = %+v, %v", opts, err)
	}
}
