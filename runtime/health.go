package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/agora-etl/agora/internal/connguard"
)

// healthCheckTimeout bounds the coordinator's Healthy call behind /readyz.
const healthCheckTimeout = 2 * time.Second

// The health server's timeouts. A probe or a scrape sends a few hundred
// bytes and reads at most a few megabytes of /metrics or /status; a
// connection slower than these is a slow client or an attack holding a
// descriptor the runs need.
const (
	healthReadHeaderTimeout = 5 * time.Second
	healthReadTimeout       = 10 * time.Second
	healthWriteTimeout      = 30 * time.Second
	healthIdleTimeout       = 30 * time.Second
	healthMaxHeaderBytes    = 16 << 10
)

// HealthServer serves a pool's probes over HTTP:
//
//   - GET /healthz answers 200 while the process is alive.
//   - GET /readyz answers 200 once every pipeline has started and the
//     coordinator, when it implements HealthReporter, is healthy; 503 before
//     that, while the coordinator is unhealthy, and again once a shutdown
//     has begun.
//   - GET /status answers a PoolStatus as JSON.
//   - GET /metrics answers the metrics the pool was given (WithMetrics;
//     package runtime/metrics, and docs/operating.md, "Metrics", for the
//     list), and 404 Not Found when it was given none.
//
// A WorkerPool configured with WithHealthPort or WithHealthAddr runs one,
// starting it before the pipelines and stopping it last. A HealthServer is
// also an http.Handler, to mount the endpoints elsewhere.
type HealthServer struct {
	pool *WorkerPool
	mux  *http.ServeMux

	mu  sync.Mutex
	ln  net.Listener
	srv *http.Server
}

// NewHealthServer returns the health endpoints of pool.
func NewHealthServer(pool *WorkerPool) *HealthServer {
	h := &HealthServer{pool: pool, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /healthz", h.healthz)
	h.mux.HandleFunc("GET /readyz", h.readyz)
	h.mux.HandleFunc("GET /status", h.status)
	h.mux.HandleFunc("GET /metrics", h.metrics)
	return h
}

// ServeHTTP serves /healthz, /readyz, /status and /metrics.
func (h *HealthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Listen binds addr ("host:port"; port 0 picks a free one) without serving
// yet, so a bad address is reported before any pipeline starts.
//
// The server it prepares bounds what a client can hold: read, write and
// idle timeouts, and at most a sixteenth of the process's descriptor limit
// in connections (4 to 128), closing the longest idle one to make room, so
// a flood of held connections neither starves the runs of descriptors nor
// keeps a probe out (docs/operating.md, "Health endpoints").
func (h *HealthServer) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	guard := connguard.New(ln, connguard.Cap(connguard.DescriptorLimit()), "health server", h.pool.logger())
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ln = guard
	h.srv = &http.Server{Handler: h, ConnState: guard.ConnState,
		ReadHeaderTimeout: healthReadHeaderTimeout, ReadTimeout: healthReadTimeout,
		WriteTimeout: healthWriteTimeout, IdleTimeout: healthIdleTimeout, MaxHeaderBytes: healthMaxHeaderBytes}
	return nil
}

// Serve serves on the address bound by Listen until Shutdown; it returns nil
// after Shutdown.
func (h *HealthServer) Serve() error {
	h.mu.Lock()
	srv, ln := h.srv, h.ln
	h.mu.Unlock()
	if srv == nil {
		return errors.New("runtime: HealthServer.Serve called before Listen")
	}
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Addr returns the bound address, or "" before Listen.
func (h *HealthServer) Addr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ln == nil {
		return ""
	}
	return h.ln.Addr().String()
}

// Shutdown stops the server, waiting for requests in progress until ctx ends.
func (h *HealthServer) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	srv := h.srv
	h.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Shutdown(ctx)
}

func (h *HealthServer) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

func (h *HealthServer) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if reason := h.notReady(r.Context()); reason != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready:", reason)
		return
	}
	fmt.Fprintln(w, "ready")
}

// notReady returns why the pool is not ready, or "".
func (h *HealthServer) notReady(ctx context.Context) string {
	pr := h.pool.run.Load()
	if pr == nil {
		return "starting"
	}
	if reason := stateNotReady(pr.state.Load()); reason != "" {
		return reason
	}
	if hr := pr.caps.HealthReporter; hr != nil {
		cctx, cancel := context.WithTimeout(ctx, healthCheckTimeout)
		defer cancel()
		if err := hr.Healthy(cctx); err != nil {
			return "coordinator unhealthy: " + err.Error()
		}
		// The check can take a while; a shutdown that began meanwhile
		// must not be answered with a 200.
		return stateNotReady(pr.state.Load())
	}
	return ""
}

// stateNotReady says why a pool in state st is not ready, or "".
func stateNotReady(st int32) string {
	switch st {
	case poolStarting:
		return "starting"
	case poolShuttingDown:
		return "shutting down"
	case poolStopped:
		return "stopped"
	}
	return ""
}

func (h *HealthServer) status(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(h.pool.Status())
}

// coordinatorStatus marshals the coordinator's Status when it has one
// (sr not nil). A value that does not marshal is reported as an error
// string rather than breaking /status.
func coordinatorStatus(sr StatusReporter, logger *slog.Logger) json.RawMessage {
	if sr == nil {
		return nil
	}
	b, err := json.Marshal(sr.Status())
	if err != nil {
		logger.Warn("coordinator status does not marshal to JSON", slog.Any("error", err))
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}

// metrics serves the metrics the pool was given (WithMetrics); a pool
// given none has no /metrics.
func (h *HealthServer) metrics(w http.ResponseWriter, r *http.Request) {
	m := h.pool.Metrics()
	if m == nil {
		http.NotFound(w, r)
		return
	}
	m.ServeHTTP(w, r)
}
