package worker

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/agora-etl/agora/runtime"
)

// NewLogger returns a slog logger writing to w in format "text" (also
// "") or "json" at level ("debug", "info" (also ""), "warn", "error", or
// slog's forms such as "info+2"). It is what RunMain builds from its
// -log-format and -log-level flags. A nil w means os.Stderr. A record
// logged with a run's context (slog.InfoContext(ctx, …) inside Run) gets
// the run's pipeline_id, run_number and fencing_token unless it names a
// pipeline_id itself (runtime.RunAttrsHandler).
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	if w == nil {
		w = os.Stderr
	}
	var lvl slog.Level // info when level is empty
	if text := strings.TrimSpace(level); text != "" && lvl.UnmarshalText([]byte(text)) != nil {
		return nil, fmt.Errorf("worker: log level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "text", "":
		return slog.New(runtime.RunAttrsHandler(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(runtime.RunAttrsHandler(slog.NewJSONHandler(w, opts))), nil
	default:
		return nil, fmt.Errorf("worker: log format %q: want text or json", format)
	}
}
