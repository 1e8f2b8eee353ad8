package etl

import (
	"strings"
	"testing"
)

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
