package slogdefault

import (
	"bytes"
	"log"
	"log/slog"
	"strings"
	"testing"
)

func TestUseRoutesTheLogPackageAndRestoresIt(t *testing.T) {
	var before bytes.Buffer
	log.SetOutput(&before)
	log.SetFlags(0)
	defer log.SetOutput(nil)
	prev := slog.Default()

	var buf bytes.Buffer
	restore := Use(slog.New(slog.NewJSONHandler(&buf, nil)))
	log.Print("through slog")
	if !strings.Contains(buf.String(), `"msg":"through slog"`) {
		t.Errorf("log.Print did not reach the logger: %q", buf.String())
	}
	restore()
	if slog.Default() != prev {
		t.Error("slog's default not put back")
	}
	log.Print("plain")
	if before.String() != "plain\n" || log.Flags() != 0 {
		t.Errorf("log package output %q, flags %d, want it back as it was", before.String(), log.Flags())
	}
}
