package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
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

// startServe runs Serve with opts in the background and returns its
// address and output; the test's end stops it.
func startServe(t *testing.T, f *fleetFixture, opts ServeOptions) (string, *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, f.in, opts, &out, &out) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not stop")
		}
	})
	addrRE := regexp.MustCompile(`http://([0-9.:\[\]a-f]+:\d+)/`)
	deadline := time.Now().Add(5 * time.Second)
	for addrRE.FindStringSubmatch(out.String()) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("Serve printed no address: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return addrRE.FindStringSubmatch(out.String())[1], &out
}

func TestServeCutsOffASlowRequest(t *testing.T) {
	f := newFixture(t)
	addr, _ := startServe(t, f, ServeOptions{Listen: "127.0.0.1:0", Token: "t", ReadTimeout: 500 * time.Millisecond})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n", addr)
	// A byte a second, for up to 20 s: the server must cut it off.
	closed := make(chan time.Duration, 1)
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		closed <- time.Since(start)
	}()
	for i := 0; i < 20; i++ {
		select {
		case took := <-closed:
			if took > 5*time.Second {
				t.Errorf("the slow request was cut off after %s, read timeout 500ms", took)
			}
			return
		case <-time.After(time.Second):
			if _, err := conn.Write([]byte("a")); err != nil {
				return // cut off
			}
		}
	}
	t.Fatal("a request sending a byte a second was held for 20 s")
}

func TestServeCapsConcurrentConnections(t *testing.T) {
	f := newFixture(t)
	addr, _ := startServe(t, f, ServeOptions{Listen: "127.0.0.1:0", MaxConns: 2, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 30 * time.Second})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// Give the server time to accept both before the third arrives.
	time.Sleep(100 * time.Millisecond)
	third := &http.Client{Timeout: 500 * time.Millisecond}
	if resp, err := third.Get("http://" + addr + "/"); err == nil {
		resp.Body.Close()
		t.Fatalf("a third connection was served (%d) with two held and a cap of 2", resp.StatusCode)
	}
	held[0].Close()
	later := &http.Client{Timeout: 10 * time.Second}
	resp, err := later.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("after one connection closed: %v", err)
	}
	resp.Body.Close()
}

func TestServeReadsTheTokenFromAFile(t *testing.T) {
	f := newFixture(t)
	t.Setenv(TokenEnv, "from-env")
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, out := startServe(t, f, ServeOptions{Listen: "127.0.0.1:0", TokenFile: path})
	if !strings.Contains(out.String(), "from --token-file") {
		t.Errorf("Serve says %q", out.String())
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/workers", nil)
	req.Header.Set("Authorization", "Bearer from-file")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the file's token: %d", resp.StatusCode)
	}
	for name, opts := range map[string]ServeOptions{
		"both":    {Listen: "127.0.0.1:0", Token: "a", TokenFile: path},
		"missing": {Listen: "127.0.0.1:0", TokenFile: filepath.Join(t.TempDir(), "nope")},
		"empty":   {Listen: "127.0.0.1:0", TokenFile: writeFile(t, "\n")},
	} {
		if err := Serve(context.Background(), f.in, opts, io.Discard, io.Discard); !errors.Is(err, ErrTokenSources) {
			t.Errorf("%s: Serve = %v, want ErrTokenSources", name, err)
		}
	}
}

func writeFile(t *testing.T, s string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestServeWarnsBeyondLoopbackAndAllowsItsAddress(t *testing.T) {
	f := newFixture(t)
	t.Setenv(TokenEnv, "")
	_, out := startServe(t, f, ServeOptions{Listen: "127.0.0.1:0"})
	if strings.Contains(out.String(), "WARN") {
		t.Errorf("a loopback dashboard warns: %q", out.String())
	}
	addr, out := startServe(t, f, ServeOptions{Listen: "0.0.0.0:0", AllowedHosts: []string{"fleet.example"}})
	if !strings.Contains(out.String(), "level=WARN") || !strings.Contains(out.String(), "without TLS and without a token") {
		t.Errorf("listening on 0.0.0.0 without a token: %q", out.String())
	}
	_, port, _ := net.SplitHostPort(addr)
	for host, want := range map[string]int{"fleet.example:" + port: 200, "evil.example:" + port: 421} {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/api/workers", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}
