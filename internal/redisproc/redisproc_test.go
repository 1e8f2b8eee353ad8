package redisproc

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeRedis answers every connection's first line with reply.
func fakeRedis(t *testing.T, reply string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 64)
			_, _ = conn.Read(buf)
			_, _ = conn.Write([]byte(reply))
			conn.Close()
		}
	}()
	return l.Addr().String()
}

func TestFreePortIsOnLoopbackAndBindable(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d is not free: %v", port, err)
	}
	l.Close()
}

func TestPingAcceptsPongAndNoauth(t *testing.T) {
	for reply, wantOK := range map[string]bool{
		"+PONG\r\n":                            true,
		"-NOAUTH Authentication required.\r\n": true,
		"-ERR unknown command\r\n":             false,
	} {
		err := Ping(fakeRedis(t, reply), false)
		if (err == nil) != wantOK {
			t.Errorf("Ping with reply %q: err = %v, want ok=%v", reply, err, wantOK)
		}
	}
}

func TestWaitReadyStopsWhenTheProcessExits(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	close(exited)
	err = WaitReady(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), false, exited, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("err = %v, want the process-exited error", err)
	}
}

func TestWaitReadyTimesOut(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	err = WaitReady(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), false, nil, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "not ready after") {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

func TestWaitReadyReturnsOnceAnswered(t *testing.T) {
	if err := WaitReady(fakeRedis(t, "+PONG\r\n"), false, nil, time.Second); err != nil {
		t.Fatal(err)
	}
}
