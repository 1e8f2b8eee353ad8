package worker_test

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/agora-etl/agora/worker"
)

func TestNewLogger(t *testing.T) {
	for _, tc := range []struct {
		format, level string
		want          string // in the output of an Info line; "" when filtered out
	}{
		{"text", "info", `level=INFO msg=hello`},
		{"", "", `level=INFO msg=hello`}, // the defaults
		{"JSON", " debug ", `"level":"INFO","msg":"hello"`},
		{"json", "info+2", ""}, // slog's own level forms
		{"text", "warn", ""},
		{"text", "error", ""},
	} {
		var buf bytes.Buffer
		logger, err := worker.NewLogger(&buf, tc.format, tc.level)
		if err != nil {
			t.Fatalf("NewLogger(%q, %q): %v", tc.format, tc.level, err)
		}
		logger.Info("hello")
		if got := buf.String(); (tc.want == "" && got != "") || !strings.Contains(got, tc.want) {
			t.Errorf("NewLogger(%q, %q) wrote %q, want %q", tc.format, tc.level, got, tc.want)
		}
	}
}

func TestNewLoggerErrorsNameTheValue(t *testing.T) {
	for _, tc := range []struct{ format, level, want string }{
		{"xml", "info", `log format "xml": want text or json`},
		{"text", "loud", `log level "loud": want debug, info, warn or error`},
	} {
		if _, err := worker.NewLogger(&bytes.Buffer{}, tc.format, tc.level); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewLogger(%q, %q) error = %v, want %q", tc.format, tc.level, err, tc.want)
		}
	}
}

// TestNewLoggerNilWriter gets a logger on os.Stderr rather than one that
// panics at its first line.
func TestNewLoggerNilWriter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	saved := os.Stderr
	os.Stderr = w
	logger, err := worker.NewLogger(nil, "text", "info")
	os.Stderr = saved
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("to stderr")
	w.Close()
	out, _ := io.ReadAll(r)
	if !strings.Contains(string(out), "msg=\"to stderr\"") {
		t.Fatalf("stderr got %q", out)
	}
}
