package runtime

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// NewLogger returns a slog logger writing to w in format "text" or "json" at
// level ("debug", "info", "warn", "error", or slog's forms such as
// "info+2"). It is what Main builds from its -log-format and -log-level
// flags.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(strings.TrimSpace(level))); err != nil {
		return nil, fmt.Errorf("runtime: log level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("runtime: log format %q: want text or json", format)
	}
}
