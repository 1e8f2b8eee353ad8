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

// DashboardFlags are the ui command's flags, as a Dashboard receives them.
type DashboardFlags struct {
	// Listen is --listen (default DefaultDashboardListen).
	Listen string
	// Token is --token: it locks reading and enables the actions.
	Token string
	// TokenFile is --token-file, a file holding the token.
	TokenFile string
	// AllowedHosts are the --allowed-host names the dashboard answers to
	// besides localhost and the listen address.
	AllowedHosts []string
}

// Dashboard serves the web dashboard over in with flags until ctx ends.
// github.com/agora-etl/agora/fleet/ui's Dashboard is one. The dashboard is
// a module of its own (its browser tests need chromedp), so this package,
// and every worker binary, links it only when a main passes it with
// WithDashboard. The ui command ends ctx on a shutdown signal.
type Dashboard func(ctx context.Context, in *distributed.Inspector, flags DashboardFlags, stdout, stderr io.Writer) error

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
