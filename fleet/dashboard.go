package fleet

import (
	"context"
	"io"

	"github.com/agora-etl/agora/runtime/distributed"
)

// DefaultDashboardListen is the ui command's default --listen: loopback
// only, so the dashboard is not on the network by accident. It equals
// fleet/ui's DefaultListen.
const DefaultDashboardListen = "127.0.0.1:8090"

// Dashboard serves the web dashboard over in on listen until ctx ends; a
// non-empty token enables its actions. github.com/agora-etl/agora/fleet/ui's
// Dashboard is one. The dashboard is a module of its own (its browser
// tests need chromedp), so this package, and every worker binary, links it
// only when a main passes it with WithDashboard.
type Dashboard func(ctx context.Context, in *distributed.Inspector, listen, token string, stdout, stderr io.Writer) error

// Option configures Run.
type Option func(*options)

type options struct {
	dashboard Dashboard
}

// WithDashboard makes the ui command serve d. The agora command passes
// fleet/ui's Dashboard; worker binaries pass none, and their "fleet ui"
// says to run "agora fleet ui" instead.
func WithDashboard(d Dashboard) Option {
	return func(o *options) { o.dashboard = d }
}

// noDashboard is what "fleet ui" prints in a binary without a dashboard.
const noDashboard = `fleet ui: this binary does not link the dashboard; run it with the agora
command, which takes the same flags and AGORA_DISTRIBUTED_* settings:

    go install github.com/agora-etl/agora/cmd/agora@latest
    agora fleet ui

or pass fleet.WithDashboard(ui.Dashboard) (github.com/agora-etl/agora/fleet/ui)
to fleet.Run in a main of your own.
`
