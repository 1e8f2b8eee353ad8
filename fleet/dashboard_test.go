package fleet_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

// TestUIWithoutADashboardSaysWhereItIs: a binary that links no dashboard
// (every worker) answers "fleet ui" with where to find it, exit 2, before
// connecting to anything (the --redis here refuses connections).
func TestUIWithoutADashboardSaysWhereItIs(t *testing.T) {
	var out, errOut bytes.Buffer
	code := fleet.Run(context.Background(), []string{"ui", "--redis", "redis://127.0.0.1:1/0"}, &out, &errOut)
	if code != fleet.ExitUsage || !strings.Contains(errOut.String(), "agora fleet ui") || !strings.Contains(errOut.String(), "fleet.WithDashboard") {
		t.Fatalf("fleet ui without a dashboard: exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
}

// TestUIRunsTheGivenDashboard: with WithDashboard, "fleet ui" opens the
// inspector and hands it the --listen and --token flags.
func TestUIRunsTheGivenDashboard(t *testing.T) {
	srv := redistest.Start(t)
	var gotListen, gotToken string
	var gotHosts []string
	var gotInspector bool
	d := func(_ context.Context, in *distributed.Inspector, flags fleet.DashboardFlags, _, _ io.Writer) error {
		gotListen, gotToken, gotHosts, gotInspector = flags.Listen, flags.Token, flags.AllowedHosts, in != nil
		return nil
	}
	var out, errOut bytes.Buffer
	code := fleet.Run(context.Background(), []string{"ui", "--redis", srv.URL(), "--token", "t0k", "--allowed-host", "a.example", "--allowed-host", "b.example"}, &out, &errOut, fleet.WithDashboard(d))
	if code != fleet.ExitOK || gotListen != fleet.DefaultDashboardListen || gotToken != "t0k" || !gotInspector || strings.Join(gotHosts, ",") != "a.example,b.example" {
		t.Fatalf("exit %d, listen %q, token %q, hosts %q, inspector %v\n%s", code, gotListen, gotToken, gotHosts, gotInspector, errOut.String())
	}
}
