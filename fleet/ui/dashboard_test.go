package ui_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/fleet/ui"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/internal/syncbuf"
)

// TestFleetUIServesTheLinkedDashboard: "fleet ui" in a binary whose main
// passes ui.Dashboard (as the agora command does) serves the dashboard on
// --listen with the --redis fleet, until its context ends.
func TestFleetUIServesTheLinkedDashboard(t *testing.T) {
	srv := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- fleet.Run(ctx, []string{"ui", "--listen", "127.0.0.1:0", "--redis", srv.URL()}, &out, &out, fleet.WithDashboard(ui.Dashboard))
	}()
	addrRE := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`)
	deadline := time.Now().Add(10 * time.Second)
	for addrRE.FindStringSubmatch(out.String()) == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	m := addrRE.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("fleet ui printed no address: %q", out.String())
	}
	resp, err := http.Get("http://" + m[1] + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /: %d", resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != fleet.ExitOK {
			t.Errorf("fleet ui after cancel: exit %d\n%s", code, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fleet ui did not stop")
	}
}

// TestDefaultListenIsFleets: the fleet command's default --listen is the
// dashboard's.
func TestDefaultListenIsFleets(t *testing.T) {
	if fleet.DefaultDashboardListen != ui.DefaultListen {
		t.Errorf("fleet.DefaultDashboardListen = %q, ui.DefaultListen = %q", fleet.DefaultDashboardListen, ui.DefaultListen)
	}
}
