package ui

import (
	"context"
	"io"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/runtime/distributed"
)

// Dashboard is Serve in the shape fleet.WithDashboard takes, so that a main
// links the dashboard into "fleet ui" explicitly:
//
//	fleet.Run(ctx, args, os.Stdout, os.Stderr, fleet.WithDashboard(ui.Dashboard))
//
// The agora command does; worker binaries do not.
func Dashboard(ctx context.Context, in *distributed.Inspector, flags fleet.DashboardFlags, stdout, stderr io.Writer) error {
	return Serve(ctx, in, ServeOptions{Listen: flags.Listen, Token: flags.Token, TokenFile: flags.TokenFile, AllowedHosts: flags.AllowedHosts}, stdout, stderr)
}

var _ fleet.Dashboard = Dashboard
