package config

import (
	"fmt"
	"strings"

	"github.com/agora-etl/agora/internal/texttable"
	"github.com/agora-etl/agora/runtime"
)

// Summary describes the file for `agora check`: the worker settings, and
// per pipeline its schedule, components and settings. URLs are redacted.
func (f *File) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, %d pipeline%s\n", f.Path, FormatV1, len(f.Pipelines), plural(len(f.Pipelines)))
	w := f.Worker
	port := "none"
	if w.HasHealthPort {
		port = fmt.Sprint(w.HealthPort)
	}
	grace := shortDuration(runtime.DefaultGracefulShutdownTimeout) + " (default)"
	if w.GracefulShutdownTimeout > 0 {
		grace = shortDuration(w.GracefulShutdownTimeout)
	}
	id := "unique per process"
	if w.WorkerID != "" {
		id = w.WorkerID
	}
	fmt.Fprintf(&b, "worker: health_port %s, graceful_shutdown_timeout %s, worker_id %s\n", port, grace, texttable.Printable(f.known.Text(id)))
	for _, p := range f.Pipelines {
		fmt.Fprintf(&b, "pipeline %s: %s\n", texttable.Printable(p.ID), p.Schedule.describe())
		fmt.Fprintf(&b, "  source: %s\n", p.Source.describe(f.known))
		for _, t := range p.Transforms {
			if n, ok := t.(interface{ Name() string }); ok {
				fmt.Fprintf(&b, "  then:   %s\n", texttable.Printable(f.known.Text(n.Name())))
			}
		}
		for _, s := range p.Sinks {
			fmt.Fprintf(&b, "  sink:   %s\n", s.describe(f.known))
		}
		if p.DLQ != nil {
			fmt.Fprintf(&b, "  dlq:    %s\n", p.DLQ.describe(f.known))
		}
		if len(p.After) > 0 {
			fmt.Fprintf(&b, "  after:  %s\n", p.afterText())
		}
		dead := "unlimited"
		if p.MaxDeadLetters >= 0 {
			dead = fmt.Sprint(p.MaxDeadLetters)
		}
		// Timeout and deadline have no default, so they are shown only
		// when set.
		limits := ""
		if p.Timeout > 0 {
			limits = ", timeout " + shortDuration(p.Timeout)
		}
		if p.Deadline > 0 {
			limits += ", deadline " + shortDuration(p.Deadline)
		}
		fmt.Fprintf(&b, "  batch_size %d, error_backoff %s, max_consecutive_errors %d, max_dead_letters %s%s\n",
			p.BatchSize, shortDuration(p.ErrorBackoff), p.MaxConsecutiveErrors, dead, limits)
		if len(p.Params) > 0 {
			fmt.Fprintf(&b, "  params: %s (defaults)\n", texttable.Printable(f.known.Text(runtime.FormatParams(p.Params))))
		}
		if t := p.Tracing; t.Enabled {
			exporter := t.Exporter
			if exporter == ExporterAuto {
				exporter = "otlp when OTEL_EXPORTER_OTLP_*ENDPOINT is set, else none"
			}
			fmt.Fprintf(&b, "  tracing: %s, service %s, exporter %s\n", t.Backend, t.service(f.lookupEnv), exporter)
		}
	}
	return b.String()
}

// String is Summary.
func (f *File) String() string { return f.Summary() }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
