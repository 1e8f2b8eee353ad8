package cli

import (
	"bytes"
	"log"
	"log/slog"
	"strings"
	"testing"
)

func TestUseDefaultLoggerRoutesTheDefaultAndRestoresIt(t *testing.T) {
	before := slog.Default()
	var buf bytes.Buffer
	restore := useDefaultLogger(slog.New(slog.NewJSONHandler(&buf, nil)))
	slog.Info("from the default")
	log.Print("from the log package")
	restore()
	if slog.Default() != before {
		t.Fatal("the previous default logger was not put back")
	}
	for _, want := range []string{`"msg":"from the default"`, `"msg":"from the log package"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("%s not in the handler's output:\n%s", want, buf.String())
		}
	}
}
