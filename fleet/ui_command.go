package fleet

import (
	"context"
	"io"
	"os/signal"
	"strings"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// hostList is the repeatable --allowed-host flag.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(s string) error {
	*h = append(*h, s)
	return nil
}

// serveUI runs the dashboard until ctx ends or a shutdown signal comes.
// It asks for the signals itself: a shell starts a background job with
// SIGINT ignored, and only a process that asks for a signal gets it back,
// so "fleet ui &" in a script would otherwise ignore kill -INT.
func serveUI(ctx context.Context, d Dashboard, in *distributed.Inspector, fl cmdFlags, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, runtime.ShutdownSignals()...)
	defer stop()
	return d(ctx, in, DashboardFlags{Listen: fl.listen, Token: fl.token, TokenFile: fl.tokenFile, AllowedHosts: fl.hosts}, stdout, stderr)
}
