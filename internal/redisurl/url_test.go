package redisurl

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseRedisURLForms(t *testing.T) {
	tests := []struct {
		raw                      string
		network, addr, user, pwd string
		db                       int
		tls                      bool
		shown                    string
	}{
		{raw: "redis://localhost", network: "tcp", addr: "localhost:6379", shown: "redis://localhost"},
		{raw: "redis://10.0.0.5:6380/2", network: "tcp", addr: "10.0.0.5:6380", db: 2, shown: "redis://10.0.0.5:6380/2"},
		{raw: "rediss://cache.example.com:6380/0", network: "tcp", addr: "cache.example.com:6380", tls: true, shown: "rediss://cache.example.com:6380/0"},
		{raw: "redis://:hunter2@host:6379/1", network: "tcp", addr: "host:6379", pwd: "hunter2", db: 1, shown: "redis://:xxxxx@host:6379/1"},
		{raw: "redis://alice:p%40ss@host/3", network: "tcp", addr: "host:6379", user: "alice", pwd: "p@ss", db: 3, shown: "redis://alice:xxxxx@host/3"},
		{raw: "redis://alice@host", network: "tcp", addr: "host:6379", user: "alice", shown: "redis://alice@host"},
		{raw: "unix:///var/run/redis.sock", network: "unix", addr: "/var/run/redis.sock", shown: "unix:///var/run/redis.sock"},
		{raw: "unix://bob:pw@/tmp/r.sock?db=4", network: "unix", addr: "/tmp/r.sock", user: "bob", pwd: "pw", db: 4, shown: "unix://bob:xxxxx@/tmp/r.sock?db=4"},
		{raw: "redis://[::1]:7000/0?dial_timeout=2s", network: "tcp", addr: "[::1]:7000", shown: "redis://[::1]:7000/0?dial_timeout=2s"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			u, err := Parse(tt.raw)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			o := u.Options
			if o.Network != tt.network || o.Addr != tt.addr || o.Username != tt.user || o.Password != tt.pwd || o.DB != tt.db {
				t.Errorf("got network=%s addr=%s user=%q password=%q db=%d", o.Network, o.Addr, o.Username, o.Password, o.DB)
			}
			if (o.TLSConfig != nil) != tt.tls {
				t.Errorf("TLS = %v, want %v", o.TLSConfig != nil, tt.tls)
			}
			if u.Redacted != tt.shown {
				t.Errorf("redacted = %q, want %q", u.Redacted, tt.shown)
			}
		})
	}
}

func TestParseRedisURLErrorsNeverShowThePassword(t *testing.T) {
	const secret = "Sup3rSecretPw"
	tests := []struct {
		raw, want string
	}{
		{"", "is empty"},
		{"localhost:6379", "has no scheme"},
		{":" + secret + "@localhost:6379", "has no scheme"},
		{"http://u:" + secret + "@host", `scheme "http" is not supported`},
		{"redis://u:" + secret + "@host:99999", "not between 1 and 65535"},
		{"redis://u:" + secret + "@host:abc", "not a valid URL"},
		{"redis://u:" + secret + "@host/x", `database "x" is not a number`},
		{"redis://u:" + secret + "@host/1/2", "is not a database number"},
		{"redis://u:" + secret + "@/0", "has no host"},
		{"redis://u:" + secret + "#x@host", "not a valid URL"},
		{"redis://u:" + secret + "@host/0#frag", "#fragment"},
		{"unix://u:" + secret + "@", "no socket path"},
		{"unix://u:" + secret + "@/tmp/s?db=x", `database "x"`},
		{"redis://u:" + secret + "@host/0?bogus=1", "unexpected option"},
		{"redis://u:" + secret + "@host/0?dial_timeout=soon", "invalid dial_timeout"},
		{"redis://host\x7f", "not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := Parse(tt.raw)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tt.raw)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "Sup3r") {
				t.Errorf("error shows the password: %q", err)
			}
		})
	}
}

func TestRedactorRemovesEverySpellingAndKeepsTheChain(t *testing.T) {
	raw := "redis://alice:p%40ss%2Fw0rd@host:6379/0"
	r := NewRedactor(raw)
	sentinel := errors.New("boom")
	err := fmt.Errorf("dial %s failed, password p@ss/w0rd, escaped p%%40ss%%2Fw0rd: %w", raw, sentinel)
	got := r.Wrap(err)
	if !errors.Is(got, sentinel) {
		t.Fatal("wrap lost the error chain")
	}
	msg := got.Error()
	for _, leak := range []string{"p@ss/w0rd", "p%40ss%2Fw0rd", "p%40ss%2fw0rd"} {
		if strings.Contains(msg, leak) {
			t.Errorf("message %q still contains %q", msg, leak)
		}
	}
	if !strings.Contains(msg, "redis://alice:xxxxx@host:6379/0") {
		t.Errorf("message %q does not show the redacted URL", msg)
	}
	if r.Wrap(nil) != nil {
		t.Error("wrap(nil) != nil")
	}
	plain := errors.New("nothing secret")
	if r.Wrap(plain) != plain {
		t.Error("wrap changed an error without secrets")
	}
}

// TestParseRedisURLPasswordTheParserMisreads covers passwords with an
// unencoded / ? # or @: Go's URL parser then reads part of the password as
// a path, query, fragment or host. Whether or not the rest would parse,
// the URL is refused, and neither the error nor anything else shows any
// piece of the password.
func TestParseRedisURLPasswordTheParserMisreads(t *testing.T) {
	for _, tc := range []struct{ raw, password string }{
		{"redis://default:/Qk3x+9s@redis.example.com:6379", "/Qk3x+9s"},
		{"redis://:1234#abc@host:6379", "1234#abc"},
		{"redis://default:4821/kfjAb@host", "4821/kfjAb"},
		{"unix://u:/hunter2secret@/tmp/r.sock", "/hunter2secret"},
		{"redis://u:?client_name=hunter2secret@127.0.0.1", "?client_name=hunter2secret"},
		{"redis://:p@ssw0rd#2024@redis.example.com:6379/0", "p@ssw0rd#2024"},
		{"rediss://0:@00#@00", "@00#"},
		{"unix://0:#000@/00", "#000"},
	} {
		_, err := Parse(tc.raw)
		if err == nil {
			t.Errorf("Parse(%q) succeeded; want it refused", tc.raw)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "percent-encode") {
			t.Errorf("Parse(%q) = %q; want the advice to percent-encode", tc.raw, msg)
		}
		for _, piece := range passwordPieces(tc.password) {
			if strings.Contains(msg, piece) {
				t.Errorf("Parse(%q) error %q shows %q of the password", tc.raw, msg, piece)
			}
		}
	}
}

// passwordPieces splits a password at the characters URL parsing splits at,
// keeping pieces long enough to be telling.
func passwordPieces(pw string) []string {
	var out []string
	for _, p := range strings.FieldsFunc(pw, func(r rune) bool { return strings.ContainsRune("/?#@:", r) }) {
		if len(p) >= 3 {
			out = append(out, p)
		}
	}
	return out
}

// TestParseErrorsShowTheRedactedURL: an error names the URL, password
// replaced, so the reader sees which URL is wrong.
func TestParseErrorsShowTheRedactedURL(t *testing.T) {
	for _, raw := range []string{
		"redis://:hunter2@127.0.0.1:6379/notadb",
		"http://:hunter2@127.0.0.1:6379",
		"redis+cluster://:hunter2@127.0.0.1:7000/3",
		"redis+sentinel://:hunter2@127.0.0.1:26379",
	} {
		_, err := Parse(raw)
		if err == nil {
			t.Fatalf("Parse(%q) succeeded", raw)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error for %q shows the password: %v", raw, err)
		}
		if !strings.Contains(err.Error(), ":xxxxx@127.0.0.1") {
			t.Errorf("error for %q does not show the redacted URL: %v", raw, err)
		}
	}
}
