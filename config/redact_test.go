package config

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://:s3cret@127.0.0.1:6379/0", "redis://:xxxxx@127.0.0.1:6379/0"},
		{"redis://user:s3cret@host:6379", "redis://user:xxxxx@host:6379"},
		{"rediss://user:p@ss/w0rd@host", "rediss://user:xxxxx@host"},
		{"postgres://app:pw@db/x?sslmode=disable", "postgres://app:xxxxx@db/x?sslmode=disable"},
		{`url "redis://:a@h" and "redis://:b@k"`, `url "redis://:xxxxx@h" and "redis://:xxxxx@k"`},
		{"host=db password=hunter2 user=app", "host=db password=xxxxx user=app"},
		{"https://h/x?token=abc&y=1", "https://h/x?token=xxxxx&y=1"},
		{"mailto:someone@example.org", "mailto:someone@example.org"},
		{"redis://user@host", "redis://user@host"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, secret := range []string{"s3cret", "p@ss/w0rd", "hunter2"} {
		if got := Redact("redis://u:" + secret + "@h password=" + secret); strings.Contains(got, secret) {
			t.Errorf("secret %q survives in %q", secret, got)
		}
	}
}
