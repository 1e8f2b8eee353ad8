package connguard

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// guardedServer serves h behind a Listener holding at most max
// connections; /block answers once release is closed.
func guardedServer(t *testing.T, max int, release chan struct{}) (*Listener, string, *bytes.Buffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	g := New(ln, max, "health server", slog.New(slog.NewTextHandler(&logs, nil)))
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("/block", func(w http.ResponseWriter, _ *http.Request) { <-release; io.WriteString(w, "late") })
	srv := &http.Server{Handler: mux, ConnState: g.ConnState, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(g) }()
	t.Cleanup(func() { _ = srv.Close() })
	return g, ln.Addr().String(), &logs
}

// dial opens a connection and, unless path is "", sends GET path on it.
func dial(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if path != "" {
		if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// answer reads one response from c and returns its status code.
func answer(t *testing.T, c net.Conn) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// closedByServer reports whether the server closed c without answering.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 1))
	return n == 0 && err == io.EOF || err != nil && strings.Contains(err.Error(), "reset")
}

// waitIdle waits until the guard has seen n connections go idle.
func waitIdle(t *testing.T, g *Listener, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		g.mu.Lock()
		idle := 0
		for _, st := range g.conns {
			if st.state == http.StateIdle {
				idle++
			}
		}
		g.mu.Unlock()
		if idle >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle connections, want %d", idle, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestClosesTheLongestIdleConnectionAtTheCap(t *testing.T) {
	g, addr, logs := guardedServer(t, 2, make(chan struct{}))
	first := dial(t, addr, "/ok")
	if code := answer(t, first); code != 200 {
		t.Fatalf("first: %d", code)
	}
	waitIdle(t, g, 1)
	second := dial(t, addr, "/ok")
	if code := answer(t, second); code != 200 {
		t.Fatalf("second: %d", code)
	}
	waitIdle(t, g, 2)

	// A probe arriving at the cap is answered; the first idle one made room.
	probe := dial(t, addr, "/ok")
	if code := answer(t, probe); code != 200 {
		t.Fatalf("probe at the cap: %d", code)
	}
	if !closedByServer(first) {
		t.Error("the longest idle connection is still open")
	}
	if _, err := io.WriteString(second, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil || answer(t, second) != 200 {
		t.Errorf("the second connection was closed instead of the first: %v", err)
	}
	if g.Held() > 2 {
		t.Errorf("the guard holds %d connections, cap 2", g.Held())
	}
	if !strings.Contains(logs.String(), "connection cap") || strings.Count(logs.String(), "\n") != 1 {
		t.Errorf("want one WARN line for the shed connections, got:\n%s", logs)
	}
}

func TestNeverCutsARequestInProgress(t *testing.T) {
	release := make(chan struct{})
	g, addr, _ := guardedServer(t, 2, release)
	a := dial(t, addr, "/block")
	b := dial(t, addr, "/block")
	deadline := time.Now().Add(5 * time.Second)
	for {
		g.mu.Lock()
		active := 0
		for _, st := range g.conns {
			if st.state == http.StateActive {
				active++
			}
		}
		g.mu.Unlock()
		if active == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d active connections, want 2", active)
		}
		time.Sleep(time.Millisecond)
	}
	late := dial(t, addr, "/ok")
	if !closedByServer(late) {
		t.Error("a connection beyond the cap was served while every held one was busy")
	}
	close(release)
	for _, c := range []net.Conn{a, b} {
		if code := answer(t, c); code != 200 {
			t.Errorf("a request in progress answered %d", code)
		}
	}
}
