package ui

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/syncbuf"
)

// lockedBuffer collects logs written from several goroutines.
type lockedBuffer = syncbuf.Buffer

func TestServeListensReadsTheTokenFromTheEnvironmentAndStops(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ env, flag, mode string }{
		{"", "", "read-only"},
		{"from-env", "", "need the token (from AGORA_UI_TOKEN)"},
		{"", "from-flag", "need the token (from --token)"},
	} {
		t.Setenv(TokenEnv, tc.env)
		ctx, cancel := context.WithCancel(context.Background())
		var out lockedBuffer
		done := make(chan error, 1)
		go func() {
			done <- Serve(ctx, f.in, ServeOptions{Listen: "127.0.0.1:0", Token: tc.flag}, &out, &out)
		}()
		addrRE := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`)
		deadline := time.Now().Add(5 * time.Second)
		for addrRE.FindStringSubmatch(out.String()) == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		m := addrRE.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("Serve printed no address: %q", out.String())
		}
		if !strings.Contains(out.String(), tc.mode) {
			t.Errorf("env %q flag %q: Serve says %q, want %q", tc.env, tc.flag, out.String(), tc.mode)
		}
		resp, err := http.Get("http://" + m[1] + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET /: %d", resp.StatusCode)
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve after cancel: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Serve did not stop")
		}
	}
}

func TestDefaultListenIsLoopback(t *testing.T) {
	if !strings.HasPrefix(DefaultListen, "127.0.0.1:") {
		t.Errorf("DefaultUIListen = %q, want loopback", DefaultListen)
	}
}
