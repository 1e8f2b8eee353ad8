package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agora-etl/agora/runtime/distributed"
)

// Defaults of ServeOptions' limits. The read timeout cuts off a client
// that sends its request slowly (a byte a second holds nothing for long);
// the write timeout leaves a page over a slow Redis time to be read.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 15 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxConns          = 128
)

// ErrTokenSources is wrapped by Serve's error when the token is given
// more than one way, or its file cannot be used.
var ErrTokenSources = errors.New("ui: token")

// ServeOptions configure Serve.
type ServeOptions struct {
	// Listen is the address (default DefaultListen).
	Listen string
	// Token enables the actions and locks reading (see Options.Token).
	// On a command line it is visible to every local user in ps: prefer
	// TokenFile or AGORA_UI_TOKEN.
	Token string
	// TokenFile is a file holding the token (a trailing newline is not
	// part of it); not with Token. With neither, AGORA_UI_TOKEN is read,
	// and when that is empty too the dashboard is read-only and open.
	TokenFile string
	// AllowedHosts are more names the dashboard answers to (see
	// Options.AllowedHosts); the listen address's host is added.
	AllowedHosts []string
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound
	// each connection (defaults DefaultReadHeaderTimeout and so on).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConns caps the connections served at once (default
	// DefaultMaxConns); more wait to be accepted.
	MaxConns int
}

func (o ServeOptions) withDefaults() ServeOptions {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&o.ReadTimeout, DefaultReadTimeout)
	set(&o.WriteTimeout, DefaultWriteTimeout)
	set(&o.IdleTimeout, DefaultIdleTimeout)
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	return o
}

// token returns the token from opts.Token, opts.TokenFile or
// AGORA_UI_TOKEN, and where it came from.
func (o ServeOptions) token() (string, string, error) {
	switch {
	case o.Token != "" && o.TokenFile != "":
		return "", "", fmt.Errorf("%w: give --token or --token-file, not both", ErrTokenSources)
	case o.Token != "":
		return o.Token, "--token", nil
	case o.TokenFile != "":
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return "", "", fmt.Errorf("%w file: %w", ErrTokenSources, err)
		}
		t := strings.TrimRight(string(b), "\r\n")
		if t == "" || strings.TrimSpace(t) != t {
			return "", "", fmt.Errorf("%w file %s: want the token on one line, without spaces around it", ErrTokenSources, o.TokenFile)
		}
		return t, "--token-file", nil
	case os.Getenv(TokenEnv) != "":
		return os.Getenv(TokenEnv), TokenEnv, nil
	}
	return "", "", nil
}

// Serve listens on opts.Listen and serves the dashboard over in until ctx
// ends. It is what "fleet ui" runs. Every connection is bounded (see
// ServeOptions), and listening beyond loopback is logged as a warning:
// the dashboard has no TLS of its own, so the token and the fleet's data
// cross the network in clear unless a TLS proxy is in front.
func Serve(ctx context.Context, in *distributed.Inspector, opts ServeOptions, stdout, stderr io.Writer) error {
	opts = opts.withDefaults()
	token, from, err := opts.token()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return err
	}
	host := hostName(ln.Addr().String())
	allowed := append([]string{hostName(opts.Listen), host}, opts.AllowedHosts...)
	if !loopback(host) {
		what := "without TLS: put a TLS proxy in front"
		if token == "" {
			what = "without TLS and without a token: anyone who reaches it reads the fleet"
		}
		log.Warn("fleet ui: listening beyond loopback "+what, "listen", ln.Addr().String())
	}
	h := NewHandler(in, Options{Token: token, AllowedHosts: allowed, Logger: log})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: opts.ReadHeaderTimeout, ReadTimeout: opts.ReadTimeout,
		WriteTimeout: opts.WriteTimeout, IdleTimeout: opts.IdleTimeout, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	mode := "read-only and open (no --token, --token-file or " + TokenEnv + ")"
	if token != "" {
		mode = "reading and pause, resume and trigger need the token (from " + from + ")"
	}
	fmt.Fprintf(stdout, "fleet dashboard on http://%s/ — %s\n", ln.Addr(), mode)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(limitListener(ln, opts.MaxConns)) }()
	select {
	case <-ctx.Done():
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutCtx)
	case err := <-done:
		return err
	}
}

// loopback reports whether host is a loopback address or localhost; an
// unspecified address (0.0.0.0, ::) listens on every interface.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// limitListener accepts at most n connections at once; the others wait
// in the kernel's queue until one closes.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limited{Listener: ln, slots: make(chan struct{}, n)}
}

type limited struct {
	net.Listener
	slots chan struct{}
}

func (l *limited) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, free: func() { <-l.slots }}, nil
}

// slotConn gives its slot back once, when first closed.
type slotConn struct {
	net.Conn
	free func()
	once sync.Once
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}
